from __future__ import annotations

from mind.retrieval.chunker import chunk_text


def test_short_text_is_one_chunk() -> None:
    assert [(c.index, c.text, c.char_start, c.char_end) for c in chunk_text("hello")] == [(0, "hello", 0, 5)]
    assert chunk_text("") == []


def test_paragraphs_pack_and_overlap() -> None:
    paras = [f"p{i} " * 120 for i in range(6)]  # ~480-600 chars each
    text = "\n\n".join(paras)
    chunks = chunk_text(text)
    assert len(chunks) >= 2
    for c in chunks:
        own = text[c.char_start : c.char_end]
        assert c.text.endswith(own)  # offsets point at the chunk's own text
        assert len(own) <= 2000
    # chunk i>0 starts with the last 200 chars of chunk i-1's own text
    prev_own = text[chunks[0].char_start : chunks[0].char_end]
    assert chunks[1].text.startswith(prev_own[-200:])
    # every paragraph is covered
    covered = "".join(text[c.char_start : c.char_end] for c in chunks)
    assert all(p.strip() in covered for p in paras)


def test_oversized_paragraph_split_by_sentences_then_hard() -> None:
    sentence = "This is a sentence about deployment. "
    text = sentence * 150  # one paragraph of ~5,500 chars
    chunks = chunk_text(text)
    assert len(chunks) >= 3
    assert all(c.char_end - c.char_start <= 2000 for c in chunks)
    assert (chunks[0].char_start == 0 and chunks[-1].char_end == len(text.rstrip())) or chunks[-1].char_end == len(text)
    one_sentence = "x" * 4500
    hard = chunk_text(one_sentence)
    assert [(c.char_start, c.char_end) for c in hard] == [(0, 2000), (2000, 4000), (4000, 4500)]


def test_overlap_uses_own_text_not_leaked_overlap() -> None:
    text = "a" * 1999 + "\n\n" + "b" * 150 + "\n\n" + "c" * 1990
    chunks = chunk_text(text)
    assert [c.text[-1] for c in chunks] == ["a", "b", "c"][: len(chunks)]
    if len(chunks) == 3:
        # chunk 2's prefix comes from chunk 1's own "b" text, not from chunk 0's "a" overlap
        assert "a" not in chunks[2].text
