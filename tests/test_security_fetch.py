"""Issue #12 item 4: no SSRF through URL ingest, and one deadline for a whole fetch.

Real sockets on loopback throughout. The fetcher refuses loopback, so where a test needs a hop
that is allowed it serves that hop from 127.0.0.2 and gives the policy a ``classify`` that lets
exactly that address pass; everything else is judged by the real rule. Names are looked up by a
table resolver (a parameter of the policy), so no test depends on outside DNS.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from mind.harvest import netguard
from mind.harvest.errors import HarvestError
from mind.harvest.fetch import MAX_REDIRECTS, fetch
from mind.harvest.netguard import Address, FetchPolicy, blocked_reason
from tests.http_server import running_server, server_settings
from tests.support import PageHandler

SECRET = "The internal admin password is hunter2."
PUBLIC_PAGE = "Public page about the Lyra service."
TEXT = "text/plain; charset=utf-8"
OUTSIDE = "127.0.0.2"  # stands in for a public address: only the test policy lets it pass


@dataclass
class Site:
    """A real HTTP server on ``host``; ``hits`` lists every path it was asked for."""

    host: str
    port: int = 0
    hits: list[str] = field(default_factory=list)
    redirect_to: str = ""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


class Handler(PageHandler):
    server: ThreadingHTTPServer
    site: Site

    def do_GET(self) -> None:
        site = self.site
        site.hits.append(self.path)
        if self.path == "/internal":
            self._send(200, TEXT, SECRET.encode())
        elif self.path == "/page":
            self._send(200, TEXT, PUBLIC_PAGE.encode())
        elif self.path == "/redirect":
            self._send(302, TEXT, b"", {"Location": site.redirect_to})
        elif self.path == "/loop":
            self._send(302, TEXT, b"", {"Location": "/loop"})
        elif self.path == "/drip":  # 60 bytes at 2 bytes per second: 30 s in all
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "60")
            self.end_headers()
            try:
                for _ in range(30):
                    self.wfile.write(b"ab")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass  # the client hung up: what the deadline is for
        else:
            self._send(404, TEXT, b"no route")


@contextmanager
def serving(host: str, port: int = 0, tls: ssl.SSLContext | None = None) -> Iterator[Site]:
    site = Site(host)
    handler = type("SiteHandler", (Handler,), {"site": site})
    httpd = ThreadingHTTPServer((host, port), handler)
    httpd.daemon_threads = True
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    site.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def internal() -> Iterator[Site]:
    """The server an attacker wants to reach: loopback only."""
    with serving("127.0.0.1") as site:
        yield site


@pytest.fixture
def outside() -> Iterator[Site]:
    """A server the test treats as public (127.0.0.2, let through by ``outside_policy``)."""
    with serving(OUTSIDE) as site:
        yield site


@pytest.fixture(autouse=True)
def default_policy() -> Iterator[None]:
    """Every test starts from the shipped default (private addresses refused) and leaves it."""
    netguard.configure(allow_private=False)
    yield
    netguard.configure(allow_private=False)


def table_resolver(table: dict[str, list[str]]) -> netguard.Resolver:
    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise AssertionError(f"unexpected lookup of {host!r}")
        return table[host]
    return resolve


def no_lookup(host: str, port: int) -> list[str]:
    raise AssertionError(f"a refused literal was looked up: {host!r}")


def outside_is_public(address: Address) -> str | None:
    return None if address == ipaddress.ip_address(OUTSIDE) else blocked_reason(address)


def outside_policy(names: dict[str, list[str]] | None = None) -> FetchPolicy:
    return FetchPolicy(resolver=table_resolver(names or {}), classify=outside_is_public)




# -- loopback and private targets ---------------------------------------------------------


def test_loopback_url_refused_by_default_and_never_contacted(internal: Site) -> None:
    target = f"{internal.url}/internal?token=s3cr3t"
    with pytest.raises(HarvestError) as err:
        fetch(target)
    message = str(err.value)
    assert "refusing to fetch" in message and "loopback" in message
    assert "HIVE_MIND_FETCH_PRIVATE_ADDRESSES=true" in message
    assert "s3cr3t" not in message and err.value.path == f"{internal.url}/internal?token=***"
    assert internal.hits == []


def test_name_resolving_to_loopback_refused_at_connect(internal: Site) -> None:
    policy = FetchPolicy(resolver=table_resolver({"intranet.example": ["127.0.0.1"]}))
    with pytest.raises(HarvestError, match=r"intranet\.example resolves to a loopback address"):
        fetch(f"http://intranet.example:{internal.port}/internal", policy=policy)
    # a name answering one allowed and one refused address is refused whole
    mixed = outside_policy({"mixed.example": [OUTSIDE, "127.0.0.1"]})
    with pytest.raises(HarvestError, match=r"mixed\.example resolves to a loopback address"):
        fetch(f"http://mixed.example:{internal.port}/internal", policy=mixed)
    assert internal.hits == []


def test_switch_on_allows_private_addresses(internal: Site) -> None:
    fetched = fetch(f"{internal.url}/internal", policy=FetchPolicy(allow_private=True))
    assert fetched.body.decode() == SECRET
    netguard.configure(allow_private=True)  # what the facade does with the setting on
    assert fetch(f"{internal.url}/internal").body.decode() == SECRET
    assert internal.hits == ["/internal", "/internal"]


@pytest.mark.parametrize("host", [
    "2130706433", "0x7f.1", "[::ffff:127.0.0.1]", "127.1", "0177.0.0.1", "0x7f000001",
    "127.0.0.1.", "[::1]", "0.0.0.0", "[::]", "10.0.0.1", "10.1", "172.16.0.1",
    "192.168.1.1", "169.254.169.254", "[fe80::1]", "[fd00::1]", "100.64.0.1", "224.0.0.1",
    "[ff02::1]", "[2002:7f00:1::]", "[64:ff9b::a9fe:a9fe]", "[::127.0.0.1]",
    "[::ffff:169.254.169.254]", "255.255.255.255", "198.18.0.1", "240.0.0.1",
])
def test_odd_and_private_numeric_hosts_refused_without_lookup(host: str) -> None:
    policy = FetchPolicy(resolver=no_lookup)
    with pytest.raises(HarvestError, match=r"refusing to fetch: .* address"):
        fetch(f"http://{host}:9/latest/meta-data/", policy=policy)


@pytest.mark.parametrize("host", ["example.123", "09.0.0.1", "256.1.1.1", "1.2.3.4.5",
                                  "4294967296"])
def test_numeric_hosts_that_spell_no_address_refused(host: str) -> None:
    with pytest.raises(HarvestError, match="neither a host name nor an IPv4 address"):
        fetch(f"http://{host}/", policy=FetchPolicy(resolver=no_lookup))


@pytest.mark.parametrize(("address", "public"), [
    ("8.8.8.8", True), ("1.1.1.1", True), ("2606:4700::1111", True), ("::ffff:8.8.8.8", True),
    ("2002:808:808::", True), ("127.0.0.1", False), ("::ffff:10.0.0.1", False),
    ("100.127.255.255", False), ("100.128.0.0", True), ("fec0::1", False),
    ("192.0.2.1", False), ("64:ff9b::808:808", True), ("64:ff9b::a00:1", False),
])
def test_address_table(address: str, public: bool) -> None:
    assert (blocked_reason(ipaddress.ip_address(address)) is None) is public


def test_name_that_looks_numeric_but_is_a_name() -> None:
    assert netguard.numeric_ipv4("1.cafe") is None  # a real TLD: looked up, not parsed
    assert str(netguard.numeric_ipv4("0x7f.0.1")) == "127.0.0.1"


# -- DNS rebinding --------------------------------------------------------------------------


def test_connects_to_the_vetted_address_not_a_second_lookup() -> None:
    """A rebinding name answers an allowed address once and loopback afterwards. Both servers
    listen on the same port, so a fetcher that checked one lookup and connected by name would
    reach the loopback one."""
    with serving(OUTSIDE) as outside, serving("127.0.0.1", outside.port) as internal:
        answers = iter([[OUTSIDE]])
        calls: list[str] = []

        def rebinding(host: str, port: int) -> list[str]:
            calls.append(host)
            return next(answers, ["127.0.0.1"])

        policy = FetchPolicy(resolver=rebinding, classify=outside_is_public)
        fetched = fetch(f"http://rebind.example:{outside.port}/page", policy=policy)
        assert fetched.body.decode() == PUBLIC_PAGE
        assert calls == ["rebind.example"]
        assert outside.hits == ["/page"] and internal.hits == []


def self_signed(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A certificate for ``name`` (and its key), trusted by the test through SSL_CERT_FILE."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_tls_keeps_the_name_for_sni_and_the_certificate_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Connecting to the vetted IP must not weaken TLS: the handshake still names the host."""
    cert_file, key_file = self_signed(tmp_path, "public.example")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert_file, key_file)
    server_names: list[str | None] = []

    def record(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        server_names.append(name)

    tls.sni_callback = record
    with serving(OUTSIDE, tls=tls) as site:
        names = {"public.example": [OUTSIDE], "other.example": [OUTSIDE]}
        fetched = fetch(f"https://public.example:{site.port}/page",
                        policy=outside_policy(names))
        assert fetched.body.decode() == PUBLIC_PAGE
        assert server_names == ["public.example"]
        with pytest.raises(HarvestError, match=r"fetch failed .*CERTIFICATE_VERIFY_FAILED"):
            fetch(f"https://other.example:{site.port}/page", policy=outside_policy(names))
        assert site.hits == ["/page"]


# -- redirects ------------------------------------------------------------------------------


def test_redirect_to_loopback_refused_at_the_hop(outside: Site, internal: Site) -> None:
    outside.redirect_to = f"{internal.url}/internal"
    policy = outside_policy({"public.example": [OUTSIDE]})
    with pytest.raises(HarvestError) as err:
        fetch(f"http://public.example:{outside.port}/redirect", policy=policy)
    message = str(err.value)
    assert f"redirect 1 to {internal.url}/internal: refusing to fetch: 127.0.0.1" in message
    assert "HIVE_MIND_FETCH_PRIVATE_ADDRESSES=true" in message
    assert outside.hits == ["/redirect"] and internal.hits == []


def test_redirect_to_a_name_resolving_to_loopback_refused(outside: Site, internal: Site) -> None:
    outside.redirect_to = f"http://metadata.internal:{internal.port}/internal"
    policy = outside_policy({"public.example": [OUTSIDE], "metadata.internal": ["127.0.0.1"]})
    with pytest.raises(HarvestError, match=r"redirect 1 to .*metadata\.internal resolves to a "
                                           r"loopback address"):
        fetch(f"http://public.example:{outside.port}/redirect", policy=policy)
    assert internal.hits == []


@pytest.mark.parametrize("location", ["file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO",
                                      "http://2130706433/internal"])
def test_redirect_to_other_schemes_and_odd_hosts_refused(outside: Site, location: str) -> None:
    outside.redirect_to = location
    with pytest.raises(HarvestError, match="redirect 1 to "):
        fetch(f"{outside.url}/redirect", policy=outside_policy())


def test_redirects_followed_within_the_limit(outside: Site) -> None:
    outside.redirect_to = "/page"
    fetched = fetch(f"{outside.url}/redirect", policy=outside_policy())
    assert fetched.body.decode() == PUBLIC_PAGE and fetched.final_url == f"{outside.url}/page"
    with pytest.raises(HarvestError, match=f"more than {MAX_REDIRECTS} redirects"):
        fetch(f"{outside.url}/loop", policy=outside_policy())
    assert outside.hits.count("/loop") == MAX_REDIRECTS + 1


# -- one deadline ---------------------------------------------------------------------------


@pytest.mark.slow
def test_two_bytes_per_second_is_cut_at_the_deadline(outside: Site) -> None:
    """Each read returns within a second, so a per-read timeout would wait the full 30 s."""
    deadline = 2.0
    started = time.monotonic()
    with pytest.raises(HarvestError, match="took longer than 2 s") as err:
        fetch(f"{outside.url}/drip", policy=outside_policy(), deadline=deadline)
    elapsed = time.monotonic() - started
    assert elapsed < deadline + 1.5, elapsed  # behavioural bound: far below the 30 s drip
    assert err.value.path == f"{outside.url}/drip"


def test_a_slow_lookup_counts_against_the_deadline() -> None:
    release = threading.Event()

    def stuck(host: str, port: int) -> list[str]:
        release.wait(30)
        return [OUTSIDE]

    started = time.monotonic()
    try:
        with pytest.raises(HarvestError, match="took longer than 1 s"):
            fetch("http://slow-dns.example/", deadline=1.0,
                  policy=FetchPolicy(resolver=stuck, classify=outside_is_public))
        assert time.monotonic() - started < 1.0 + 1.5
    finally:
        release.set()


# -- end to end through `serve` ------------------------------------------------------------


def test_ingest_over_http_refuses_a_loopback_url(tmp_path: Path, internal: Site) -> None:
    """The attack from the issue: server reads are on (loopback bind), the URL points at a
    service only the server can reach."""
    with running_server(server_settings(tmp_path / "data")) as url, \
            httpx.Client(base_url=url, timeout=60) as api:
        response = api.post("/v1/ingest", json={"content": f"{internal.url}/internal"})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "harvest_input"
        assert "refusing to fetch" in error["message"]
        assert "HIVE_MIND_FETCH_PRIVATE_ADDRESSES=true" in error["message"]
        hits = api.post("/v1/recall", json={"query": "admin password"}).json()["results"]
        assert not any("hunter2" in hit["content"] for hit in hits)
    assert internal.hits == []


def test_ingest_over_http_fetches_private_urls_with_the_switch_on(tmp_path: Path,
                                                                  internal: Site) -> None:
    settings = server_settings(tmp_path / "data", fetch_private_addresses=True)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=60) as api:
        response = api.post("/v1/ingest", json={"content": f"{internal.url}/internal"})
        assert response.status_code == 200, response.text
        assert response.json()["source_type"] == "url"
        assert response.json()["frames_created"] == 1
    assert internal.hits == ["/internal"]
