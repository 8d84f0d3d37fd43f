"""The examples in the rules core's docstrings are run as tests."""

import doctest

import pytest

from othello_arena.protocol import notation, rules


@pytest.mark.parametrize("module", [rules, notation])
def test_docstring_examples(module):
    result = doctest.testmod(module, raise_on_error=False, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
