"""Reading a preset file: one of the shipped presets (``fixtures/presets/CODE.toml``) or a file kept outside the
checkout (a mounted file under Docker). The only reader of preset files; the install and ``preset_check`` use it."""

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from core.errors import ApplicationError

PRESET_DIR = Path(settings.BASE_DIR) / "fixtures" / "presets"
CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True)
class PresetFile:
    code: str
    source: str  # how the install names it: "fixtures/presets/mineola.toml" or the path given
    data: dict
    sha256: str


def shipped_presets() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def preset_path(code: str) -> Path:
    # A shipped preset is a file of the presets folder, named by its code: never a path that leads out of it.
    path = PRESET_DIR / f"{code}.toml"
    if not CODE.fullmatch(code or "") or not path.exists():
        raise ApplicationError(f"unknown preset '{code}'; known presets: {', '.join(shipped_presets())} (or give "
                               "a preset file of your own with --file PATH)", field="preset")
    return path


def preset_read(*, code: str | None = None, path: str | Path | None = None) -> PresetFile:
    """The preset file of a shipped ``code``, or the file at ``path`` (its code is its ``[utility] preset``, else
    its file name); refused naming the file when it cannot be read or is not TOML."""
    if (code is None) == (path is None):
        raise ApplicationError("name a shipped preset or give a preset file (--file PATH), not both", field="preset")
    if code is not None:
        file, source = preset_path(code), f"fixtures/presets/{code}.toml"
    else:
        file = Path(path)
        source = str(file)
        if not file.is_file():
            raise ApplicationError(f"{file}: no such preset file", field="file")
    raw = file.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ApplicationError(f"{file.name} is not valid TOML: {exc}", field="preset") from None
    if code is None:
        code = str((data.get("utility") or {}).get("preset") or file.stem) if isinstance(data.get("utility"), dict) \
            else file.stem
        if not CODE.fullmatch(code):
            raise ApplicationError(f"[utility] preset '{code}' is not a preset code (lower-case letters, digits and _, "
                                   "starting with a letter)", field="utility")
    return PresetFile(code=code, source=source, data=data, sha256=hashlib.sha256(raw).hexdigest())
