"""What reading assets and archives as the engine does (preview/assets.py) costs the offline engine:
every registration's assets and archives are opened, file by file, as the engine reads them to hash
them. Measured on the repository's own program (`--stack prod`: every component's Lambda archive)
and on a build folder of 5,000 files, best of REPEATS.

Last line: `asset_reading resources=N archives=A prod_ms=P build_folder_files=F build_folder_ms=B`.

Run: .venv/bin/python benchmarks/asset_reading.py
"""

import tempfile
import time
from pathlib import Path

from integration_blueprint.preview import assets, wire
from integration_blueprint.preview.recording import record_program

REPO = Path(__file__).resolve().parents[1]
REPEATS = 5
BUILD_FOLDER_FILES = 5_000


def best_ms(read) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def main() -> None:
    recorded = record_program(REPO, stack="prod")
    inputs = [wire.from_struct(resource.raw_inputs) for resource in recorded.resources]
    archives = sum(1 for value in inputs for _ in assets.assets_in(value))
    prod_ms = best_ms(lambda: [assets.unreadable(value, REPO) for value in inputs])

    with tempfile.TemporaryDirectory() as folder:
        dist = Path(folder) / "dist"
        for index in range(BUILD_FOLDER_FILES):
            module = dist / f"package{index % 50}" / f"module{index}.js"
            module.parent.mkdir(parents=True, exist_ok=True)
            module.write_text("module.exports = {};\n")
        build_ms = best_ms(lambda: assets.unreadable({"code": {wire.SIG: wire.ARCHIVE_SIG, "path": "dist"}},
                                                     Path(folder)))

    print(f"asset_reading resources={len(inputs)} archives={archives} prod_ms={prod_ms:.1f} "
          f"build_folder_files={BUILD_FOLDER_FILES} build_folder_ms={build_ms:.1f}")


if __name__ == "__main__":
    main()
