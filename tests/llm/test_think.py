"""Tests for the streaming <think> filter."""

from __future__ import annotations

from itertools import pairwise
import re

from hypothesis import given, settings, strategies as st
import pytest

from custom_components.local_assistant.llm.think import ThinkFilter, split_think


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stream(
    chunks: list[str], *, start_in_think: bool = False, cut: bool = False
) -> tuple[str, str, ThinkFilter]:
    """Feed chunks one by one and concatenate everything returned."""
    think_filter = ThinkFilter(start_in_think=start_in_think)
    visible: list[str] = []
    thinking: list[str] = []
    for chunk in chunks:
        vis, think = think_filter.feed(chunk)
        visible.append(vis)
        thinking.append(think)
    vis, think = think_filter.flush(cut=cut)
    visible.append(vis)
    thinking.append(think)
    return "".join(visible), "".join(thinking), think_filter


# (id, text, start_in_think, visible, thinking, saw_bare_close)
STREAMS: list[tuple[str, str, bool, str, str, bool]] = [
    ("plain", "Hello world", False, "Hello world", "", False),
    ("empty", "", False, "", "", False),
    (
        "empty_block",
        "<think>\n\n</think>\n\nHello there.",
        False,
        "Hello there.",
        "\n\n",
        False,
    ),
    (
        "reasoning_block",
        "<think>The user wants the lights.</think>\n\nTurning them on.",
        False,
        "Turning them on.",
        "The user wants the lights.",
        False,
    ),
    (
        "several_blocks",
        "<think>a</think>\n\nOne. <think>b</think>  Two.\n<think>c</think>\nThree",
        False,
        "One. Two.\nThree",
        "abc",
        False,
    ),
    (
        "block_mid_text",
        "Hi\n\n<think>x</think>\n\nthere",
        False,
        "Hi\n\nthere",
        "x",
        False,
    ),
    ("only_block", "<think>hidden</think>", False, "", "hidden", False),
    (
        "leading_whitespace",
        " \n\t Hello  world \n",
        False,
        "Hello  world \n",
        "",
        False,
    ),
    (
        "whitespace_before_block",
        "\n\n<think>r</think>\n\nHi",
        False,
        "Hi",
        "r",
        False,
    ),
    ("inner_whitespace_kept", "a \n b\n\n  c", False, "a \n b\n\n  c", "", False),
    ("bare_close", "oops</think>\n\nAnswer", False, "oopsAnswer", "", True),
    ("bare_close_first", "</think>\n\nAnswer", False, "Answer", "", True),
    ("unclosed_block", "Hi <think>never closed", False, "Hi ", "never closed", False),
    (
        "unclosed_partial_close",
        "<think>reasoning</thi",
        False,
        "",
        "reasoning</thi",
        False,
    ),
    ("partial_open_at_end", "Hello <thi", False, "Hello <thi", "", False),
    ("partial_close_at_end", "Hello </think", False, "Hello </think", "", False),
    ("lone_lt_at_end", "Hello <", False, "Hello <", "", False),
    (
        "looks_like_tag",
        "<thinking is fun> and a < b, <th>, </thinker>",
        False,
        "<thinking is fun> and a < b, <th>, </thinker>",
        "",
        False,
    ),
    ("double_lt", "x <<think>y</think>z", False, "x <z", "y", False),
    ("uppercase_not_tag", "<THINK>x</THINK>", False, "<THINK>x</THINK>", "", False),
    # Blocks nest (Qwen writes the tags as single tokens): only the close of
    # the outermost one ends the reasoning.
    ("open_inside_block", "<think>a<think>b</think>c", False, "", "abc", False),
    (
        "nested_blocks",
        "<think>a<think>b</think>still reasoning</think>Answer",
        False,
        "Answer",
        "abstill reasoning",
        False,
    ),
    (
        "nested_twice",
        "<think><think><think>x</think>y</think>z</think>\n\nOk <think>w</think>then",
        False,
        "Ok then",
        "xyzw",
        False,
    ),
    (
        "nested_then_bare_close",
        "<think>a<think>b</think></think>c</think>d",
        False,
        "cd",
        "ab",
        True,
    ),
    ("lt_inside_block", "<think>a < b </ c</think>d", False, "d", "a < b </ c", False),
    (
        "prefilled_closes",
        "Let me think.</think>\n\nDone.",
        True,
        "Done.",
        "Let me think.",
        False,
    ),
    (
        "prefilled_then_block",
        "r1</think>\n\nA <think>r2</think> B",
        True,
        "A B",
        "r1r2",
        False,
    ),
    (
        "prefilled_never_closes",
        "\n\nJust an answer.",
        True,
        "Just an answer.",
        "",
        False,
    ),
    (
        "prefilled_never_closes_partial",
        "Answer <thi",
        True,
        "Answer <thi",
        "",
        False,
    ),
    (
        "prefilled_never_closes_own_open",
        "Answer <think>own",
        True,
        "Answer ",
        "own",
        False,
    ),
    ("prefilled_empty", "", True, "", "", False),
    (
        "prefilled_nested",
        "a<think>b</think>still reasoning</think>Answer",
        True,
        "Answer",
        "abstill reasoning",
        False,
    ),
    (
        "prefilled_nested_never_closes",
        "Hi <think>x</think> there",
        True,
        "Hi there",
        "x",
        False,
    ),
    # The model opened its block itself: the server did not prefill one.
    ("prefilled_own_block_first", "\n<think>r</think>\n\nHi", True, "Hi", "r", False),
    ("prefilled_second_close_is_bare", "a</think>b</think>c", True, "bc", "a", True),
]


@pytest.mark.parametrize(
    ("text", "start_in_think", "visible", "thinking", "bare"),
    [pytest.param(*row[1:], id=row[0]) for row in STREAMS],
)
@pytest.mark.parametrize("size", range(1, 8))
def test_stream_table(
    text: str,
    start_in_think: bool,
    visible: str,
    thinking: str,
    bare: bool,
    size: int,
) -> None:
    """Every table stream gives the same result at every chunk size."""
    got_visible, got_thinking, think_filter = _stream(
        _chunks(text, size), start_in_think=start_in_think
    )
    assert (got_visible, got_thinking) == (visible, thinking)
    assert think_filter.saw_bare_close is bare
    assert split_think(text, start_in_think=start_in_think) == (visible, thinking)


def test_visible_released_before_possible_tag() -> None:
    """Only a possible tag prefix is held; the rest comes out at once."""
    think_filter = ThinkFilter()
    assert think_filter.feed("Hello <") == ("Hello ", "")
    assert think_filter.feed("t") == ("", "")
    assert think_filter.feed("x") == ("<tx", "")
    assert think_filter.feed(" more") == (" more", "")
    assert think_filter.flush() == ("", "")


def test_visible_released_after_close_tag() -> None:
    """Text after </think> is released in the same feed that closes."""
    think_filter = ThinkFilter()
    assert think_filter.feed("<think>r</th") == ("", "r")
    assert think_filter.feed("ink>\n\nHi") == ("Hi", "")


def test_thinking_released_incrementally() -> None:
    """Reasoning is also returned as it streams, minus a possible "</think"."""
    think_filter = ThinkFilter()
    assert think_filter.feed("<think>abc<") == ("", "abc")
    assert think_filter.feed("/x") == ("", "</x")


def test_whitespace_after_close_dropped_across_chunks() -> None:
    think_filter = ThinkFilter()
    assert think_filter.feed("<think></think>") == ("", "")
    assert think_filter.feed("\n") == ("", "")
    assert think_filter.feed(" \n") == ("", "")
    assert think_filter.feed(" Hi ") == ("Hi ", "")
    assert think_filter.feed(" there") == (" there", "")


def test_start_in_think_holds_until_close() -> None:
    """In prefill mode nothing is released before </think> or flush."""
    think_filter = ThinkFilter(start_in_think=True)
    assert think_filter.feed("reason") == ("", "")
    assert think_filter.feed("ing</think>\nHi") == ("Hi", "reasoning")
    assert think_filter.saw_bare_close is False


def test_start_in_think_flush_releases_as_visible() -> None:
    think_filter = ThinkFilter(start_in_think=True)
    assert think_filter.feed("  Sure, ") == ("", "")
    assert think_filter.feed("done.") == ("", "")
    assert think_filter.flush() == ("Sure, done.", "")


def test_prefilled_reasoning_cut_by_max_tokens_is_not_spoken() -> None:
    """Review: reasoning cut at max_tokens before its </think> was spoken."""
    text = "Okay, the user asks about the weather. I should call GetLiveContext and"
    think_filter = ThinkFilter(start_in_think=True)
    assert think_filter.feed(text[:30]) == ("", "")
    assert think_filter.feed(text[30:] + " <think>b</think></thi") == ("", "")
    assert think_filter.in_think
    assert think_filter.flush(cut=True) == ("", f"{text} b</thi")
    assert not think_filter.in_think
    assert think_filter.saw_bare_close is False


def test_cut_answer_without_prefill_streams() -> None:
    """A server that does not prefill: a cut answer is said as it streams."""
    think_filter = ThinkFilter()
    assert think_filter.feed("The list goes on and") == ("The list goes on and", "")
    assert not think_filter.in_think
    assert think_filter.flush(cut=True) == ("", "")
    # An explicit block the cut left open stays reasoning.
    think_filter = ThinkFilter()
    assert think_filter.feed("<think>hmm, the") == ("", "hmm, the")
    assert think_filter.in_think
    assert think_filter.flush(cut=True) == ("", "")


def test_own_block_first_streams_with_start_in_think() -> None:
    """A leading <think> shows there was no prefill: nothing waits for the end."""
    think_filter = ThinkFilter(start_in_think=True)
    assert think_filter.feed("\n<think>plan") == ("", "plan")
    assert think_filter.feed("</think>\n\nHi") == ("Hi", "")
    assert think_filter.feed(" there") == (" there", "")


def test_bare_close_flag_set_when_seen() -> None:
    think_filter = ThinkFilter()
    assert think_filter.saw_bare_close is False
    assert think_filter.feed("abc</thi") == ("abc", "")
    assert think_filter.saw_bare_close is False
    assert think_filter.feed("nk> d") == ("d", "")
    assert think_filter.saw_bare_close is True


def test_flush_twice_and_empty_feed() -> None:
    think_filter = ThinkFilter()
    assert think_filter.feed("") == ("", "")
    assert think_filter.feed("a<") == ("a", "")
    assert think_filter.flush() == ("<", "")
    assert think_filter.flush() == ("", "")


# Pieces that exercise tags, tag fragments, look-alikes and whitespace.
_PIECES = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<",
        "</",
        "think",
        ">",
        "<thi",
        "nk>",
        "/",
        "hello",
        "a < b",
        "<thinking>",
        "word",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\t",
        ".",
    ]
)


@st.composite
def _text_and_cuts(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = "".join(draw(st.lists(_PIECES, max_size=30)))
    cuts = sorted(
        draw(st.sets(st.integers(min_value=0, max_value=len(text)), max_size=20))
    )
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in pairwise(bounds)]


@settings(max_examples=400, deadline=None)
@given(_text_and_cuts(), st.booleans())
def test_any_chunking_matches_one_shot(
    text_and_chunks: tuple[str, list[str]], start_in_think: bool
) -> None:
    """Chunk boundaries never change the result, in either mode."""
    text, chunks = text_and_chunks
    assert "".join(chunks) == text
    visible, thinking, think_filter = _stream(chunks, start_in_think=start_in_think)
    assert (visible, thinking) == split_think(text, start_in_think=start_in_think)
    one_shot = ThinkFilter(start_in_think=start_in_think)
    one_shot.feed(text)
    assert think_filter.saw_bare_close is one_shot.saw_bare_close


def _is_subsequence(part: str, whole: str) -> bool:
    chars = iter(whole)
    return all(char in chars for char in part)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30), st.booleans())
def test_output_only_removes(pieces: list[str], start_in_think: bool) -> None:
    """Output is input with tags and some whitespace removed, nothing added."""
    text = "".join(pieces)
    visible, thinking = split_think(text, start_in_think=start_in_think)
    assert _is_subsequence(visible, text)
    assert _is_subsequence(thinking, text)
    assert len(visible) + len(thinking) <= len(text)
    assert visible == visible.lstrip()
    if "<think>" not in text and "</think>" not in text:
        assert thinking == ""
        assert visible == text.lstrip()


_TAG_SPLIT = re.compile("(<think>|</think>)")


def _reference(
    text: str, start_in_think: bool, cut: bool = False
) -> tuple[str, str, bool]:
    """Straightforward whole-text version of the rules, to check against."""
    tokens = _TAG_SPLIT.split(text)
    if start_in_think and text.lstrip().startswith("<think>"):
        return _reference(text, False)  # the model opened its own block
    if start_in_think and not _prefilled_block_closes(tokens):
        if cut:  # reasoning cut short, never an answer
            return "", "".join(t for t in tokens if t not in _TAGS), False
        return _reference(text, False)  # the model did not think after all
    visible: list[str] = []
    thinking: list[str] = []
    depth, skip_ws, bare = int(start_in_think), True, False
    for token in tokens:
        if token == "<think>":
            depth += 1
        elif token == "</think>":
            if depth:
                depth -= 1
            else:
                bare = True
            skip_ws = skip_ws or not depth
        elif depth:
            thinking.append(token)
        else:
            segment = token.lstrip() if skip_ws else token
            skip_ws = skip_ws and not segment
            visible.append(segment)
    return "".join(visible), "".join(thinking), bare


_TAGS = ("<think>", "</think>")


def _prefilled_block_closes(tokens: list[str]) -> bool:
    depth = 1
    for token in tokens:
        depth += (token == "<think>") - (token == "</think>")
        if not depth:
            return True
    return False


@settings(max_examples=400, deadline=None)
@given(_text_and_cuts(), st.booleans(), st.booleans())
def test_matches_reference(
    text_and_chunks: tuple[str, list[str]], start_in_think: bool, cut: bool
) -> None:
    """Streaming agrees with a plain whole-text implementation of the rules."""
    text, chunks = text_and_chunks
    visible, thinking, think_filter = _stream(
        chunks, start_in_think=start_in_think, cut=cut
    )
    expected = _reference(text, start_in_think, cut)
    assert (visible, thinking, think_filter.saw_bare_close) == expected


@pytest.mark.parametrize(
    ("text", "start_in_think", "visible", "thinking", "bare"),
    [pytest.param(*row[1:], id=row[0]) for row in STREAMS],
)
def test_reference_agrees_with_table(
    text: str, start_in_think: bool, visible: str, thinking: str, bare: bool
) -> None:
    """The reference itself encodes the table, so it is a fair oracle."""
    assert _reference(text, start_in_think) == (visible, thinking, bare)


# Nested and adjacent tags, and pieces that only make a tag together.
_NESTING = st.sampled_from(
    ["<think>", "</think>", "<thi", "nk>", "</", "a", "b c", " ", "\n\n", "<", "."]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_NESTING, _PIECES), max_size=25), st.booleans(), st.booleans()
)
def test_every_split_position_gives_the_same(
    pieces: list[str], start_in_think: bool, cut: bool
) -> None:
    """Cutting the text in two anywhere, nested tags too, changes nothing."""
    text = "".join(pieces)
    whole, whole_thinking, whole_filter = _stream(
        [text], start_in_think=start_in_think, cut=cut
    )
    for at in range(len(text) + 1):
        visible, thinking, think_filter = _stream(
            [text[:at], text[at:]], start_in_think=start_in_think, cut=cut
        )
        assert (visible, thinking) == (whole, whole_thinking), at
        assert think_filter.saw_bare_close is whole_filter.saw_bare_close
