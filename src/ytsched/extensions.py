"""Loading the compiled modules (``src/native/``), with an override for other builds.

Each module can be replaced by another build of it through an environment variable holding a
path to its shared object (``YTSCHED_NATIVE_LIBRARY`` for the fair-share core,
``YTSCHED_SELECTOR_LIBRARY`` for the selector's heaps): CI runs the engine and selector tests
against their AddressSanitizer + UBSan builds that way, and ``YTSCHED_EXPECT_SANITIZED`` makes
sure the sanitized build is the one that loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType


def load_extension(name: str, override_env: str, what: str) -> ModuleType:
    """Import the compiled module ``name`` (dotted), or the build at ``$override_env``.

    ``what`` names the module in errors ("the native core").  Raises ``ImportError`` if it
    cannot be loaded, or if ``YTSCHED_EXPECT_SANITIZED`` is set and the build is not sanitized
    (every module exports ``SANITIZED``)."""
    path = os.environ.get(override_env)
    if path:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {what} from {path!r} (set by {override_env})")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(name)
    if os.environ.get("YTSCHED_EXPECT_SANITIZED") and not module.SANITIZED:
        raise ImportError(f"YTSCHED_EXPECT_SANITIZED is set but {what} is not sanitized")
    return module
