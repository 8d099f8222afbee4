"""Boolean tag expressions of node_tag_filter and scheduling_tag_filter."""

from __future__ import annotations

import pytest

from ytsched.config import TagFilter, TagFilterError


@pytest.mark.parametrize(
    ("text", "tags", "expected"),
    [
        ("", set(), True),
        ("   ", {"a"}, True),
        ("gpu", {"gpu"}, True),
        ("gpu", {"cpu"}, False),
        ("a & !b", {"a"}, True),
        ("a & !b", {"a", "b"}, False),
        ("x|y", {"y"}, True),
        ("!(x | y)", {"z"}, True),
        ("!(x | y)", {"x"}, False),
        ("a | b & c", {"a"}, True),  # & binds tighter than |
        ("(a | b) & c", {"a"}, False),
        ("!!a", {"a"}, True),
        ("127.0.0.1:9012", {"127.0.0.1:9012"}, True),
        ("dc-1 & rack_2", {"dc-1", "rack_2"}, True),
    ],
)
def test_evaluation(text: str, tags: set[str], expected: bool) -> None:
    assert TagFilter.parse(text).matches(tags) is expected


@pytest.mark.parametrize("text", ["a &", "& a", "(a", "a)", "a b", "!", "a | | b", "()"])
def test_syntax_errors(text: str) -> None:
    with pytest.raises(TagFilterError, match="invalid tag filter"):
        TagFilter.parse(text)


def test_empty_filter_is_empty() -> None:
    assert TagFilter.parse("").is_empty
    assert not TagFilter.parse("a").is_empty
