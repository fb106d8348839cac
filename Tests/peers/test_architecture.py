"""docs/ARCHITECTURE.md stays true to the tree: every folder it names exists, every folder of the code, tests, web
viewer, benchmarks and scripts is named in it, and nothing in the repository points outside it."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "ARCHITECTURE.md"
TOP_LEVELS = ["Sources", "Tests", "Web", "Benchmarks", "scripts", "docs", "deploy"]


def named_folders():
    """The paths written as `Folder/.../` in the document (a wildcard such as `Sources/C*/` names a pattern)."""
    return {match.rstrip("/") for match in re.findall(r"`((?:%s)/[^`\s]*/)`" % "|".join(TOP_LEVELS),
                                                        DOCUMENT.read_text())}


def test_every_folder_it_names_exists():
    named = named_folders()
    assert len(named) > 30
    for folder in named:
        matches = list(ROOT.glob(folder)) if "*" in folder else [ROOT / folder]
        assert matches and all(path.is_dir() for path in matches), f"{folder}/ is named but is not a folder"


def test_every_folder_is_named():
    named = named_folders()
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    folders = {str(Path(path).parent) for path in tracked if Path(path).parts[0] in TOP_LEVELS}
    covered = {folder for folder in folders
               if folder in named or any(Path(folder).match(pattern) for pattern in named if "*" in pattern)
               or folder in TOP_LEVELS}
    assert sorted(folders - covered) == [], "folders docs/ARCHITECTURE.md does not name"


def test_nothing_points_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    pointing = [path for path in tracked if (ROOT / path).is_file() and (ROOT / path).suffix != ".png"
                and re.search(r"\.\./shared|DESIGN\.md", (ROOT / path).read_text(errors="replace"))
                and path != "Tests/peers/test_architecture.py"]
    assert pointing == []
    assert "docs/ARCHITECTURE.md" in (ROOT / "README.md").read_text()
