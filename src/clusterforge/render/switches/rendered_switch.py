"""One switch's rendered files together with the NOS that reads them (the Plan's NOS, never guessed)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

__all__ = ["SwitchFiles"]


@dataclass(frozen=True, eq=False)  # compares as the mapping of its files (Mapping.__eq__)
class SwitchFiles(Mapping[str, str]):
    """{file name: text} for one switch; `nos` is the vocab.Nos value its plane declares."""

    nos: str
    files: Mapping[str, str]

    def __getitem__(self, name: str) -> str:
        return self.files[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)
