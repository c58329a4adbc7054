"""`TextCache`: what was found from a text is kept while the text is among the latest used,
within a bound on entries and one on the characters of the texts kept."""

from __future__ import annotations

from shardls.analysis.text_cache import TextCache


def test_the_least_recently_used_text_goes_first_when_entries_are_too_many() -> None:
    cache: TextCache[int] = TextCache(most=2, chars=1_000)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)


def test_long_texts_are_dropped_by_their_characters_but_the_newest_stays() -> None:
    cache: TextCache[int] = TextCache(most=100, chars=10)
    cache.put("x" * 6, 1)
    cache.put("y" * 6, 2)
    assert (cache.get("x" * 6), cache.get("y" * 6)) == (None, 2)
    cache.put("z" * 50, 3)  # longer than the bound alone: kept, as the only entry
    assert (cache.get("y" * 6), cache.get("z" * 50)) == (None, 3)


def test_putting_a_text_again_does_not_count_its_characters_twice() -> None:
    cache: TextCache[int] = TextCache(most=100, chars=10)
    cache.put("abcd", 1)
    cache.put("abcd", 2)
    cache.put("efgh", 3)
    assert (cache.get("abcd"), cache.get("efgh")) == (2, 3)
