"""The sample project's tests: one passes as shipped, three fail until the agent fixes textkit."""

from textkit import is_palindrome, slugify, truncate, word_count


def test_slugify() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Agents & Cron  ") == "agents-cron"


def test_word_count() -> None:
    assert word_count("one  two\nthree") == 3
    assert word_count("") == 0


def test_is_palindrome() -> None:
    assert is_palindrome("A man, a plan, a canal: Panama")
    assert not is_palindrome("heartbeat")


def test_truncate() -> None:
    assert truncate("heartbeat", 20) == "heartbeat"
    assert truncate("heartbeat", 5) == "hear…"
