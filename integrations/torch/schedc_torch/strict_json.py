"""JSON decoding that refuses a key given twice in one object.

json.loads keeps the last value of a repeated key and says nothing, so a
plan with "stages": 7 and then "stages": 2 ran as 2, and a cluster file
merged by hand said two things at once. schedc's own readers refuse it
(lib/Limits/JsonDuplicateKey.h); the executor and calibrate.py read
through this to agree with them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple


class DuplicateKeyError(ValueError):
    """A key twice in one object: its line and column (1-based) and the
    line of its first occurrence, when the text tells them (0 when not)."""

    def __init__(self, key: str, line: int = 0, column: int = 0,
                 first_line: int = 0) -> None:
        shown = key if len(key) <= 80 else key[:77] + "..."
        first = f" (first on line {first_line})" if first_line else ""
        # What is wrong, without where.
        self.what = (f"key {json.dumps(shown)} appears twice in one "
                     f"object{first}")
        super().__init__(f"{line}:{column}: {self.what}" if line else
                         self.what)
        self.key = key
        self.line = line
        self.column = column
        self.first_line = first_line


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    obj: Dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            # The decoder knows no positions: locate() finds them.
            raise DuplicateKeyError(key)
        obj[key] = value
    return obj


# The strings of a JSON text and the punctuation that tells keys from
# values.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]')


def locate(text: str) -> Optional[DuplicateKeyError]:
    """The first key, in the order of `text` (valid JSON), that one object
    holds twice, with its position; None when there is none."""
    # Per open container: None for an array, else the keys so far with
    # their offsets, and whether the next string is a key.
    open_: List[Optional[Tuple[Dict[str, int], List[bool]]]] = []
    for token in _TOKEN.finditer(text):
        t = token.group()
        if t == "{":
            open_.append(({}, [True]))
        elif t == "[":
            open_.append(None)
        elif t in "}]":
            if open_:
                open_.pop()
        elif t == ",":
            if open_ and open_[-1] is not None:
                open_[-1][1][0] = True
        elif open_ and open_[-1] is not None and open_[-1][1][0]:
            keys, expect_key = open_[-1]
            expect_key[0] = False
            key = json.loads(t)
            at = token.start()
            if key in keys:
                return DuplicateKeyError(
                    key, text.count("\n", 0, at) + 1,
                    at - (text.rfind("\n", 0, at) + 1) + 1,
                    text.count("\n", 0, keys[key]) + 1)
            keys[key] = at
    return None


def loads(text: str, **kwargs: Any) -> Any:
    """json.loads(text, **kwargs), but a key twice in one object raises
    DuplicateKeyError with its position."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, **kwargs)
    except DuplicateKeyError as e:
        located = locate(text)
        raise (located if located is not None else e) from None
