"""SKILL.md parsing: valid skills load; a malformed one names its file and line."""

from __future__ import annotations

from pathlib import Path

from hermes.skills import MAX_SKILL_BYTES, Skill, SkillProblem, parse_skill

from .conftest import write_skill


def test_a_valid_skill_parses_with_its_optional_keys_and_files(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "deploy-site",
        "Deploy the site to staging",
        "Run make deploy.",
        extra="version: 2\nplatforms: [linux, macos]\nrequires: [terminal]\n",
        files={"references/hosts.md": "staging: 10.0.0.2", "scripts/go.sh": "echo go"},
    )
    skill = parse_skill(folder, "user")
    assert isinstance(skill, Skill)
    assert (skill.name, skill.description, skill.body) == (
        "deploy-site",
        "Deploy the site to staging",
        "Run make deploy.",
    )
    assert (skill.version, skill.platforms, skill.requires) == (
        "2",
        ("linux", "macos"),
        ("terminal",),
    )
    assert skill.supporting_files() == ("references/hosts.md", "scripts/go.sh")


def test_broken_yaml_is_reported_with_the_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: bad\ndescription: [unclosed\n---\nbody\n")
    problem = parse_skill(folder, "user")
    assert isinstance(problem, SkillProblem)
    assert problem.path == folder / "SKILL.md"
    assert problem.line >= 3
    assert "not valid YAML" in problem.message
    assert str(problem).startswith(f"{folder / 'SKILL.md'}:{problem.line}: ")


def test_a_bad_key_names_its_line(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "wrong", extra="platforms: [beos]\n")
    problem = parse_skill(folder, "user")
    assert isinstance(problem, SkillProblem)
    assert problem.line == 4  # ---, name, description, platforms
    assert "'beos'" in problem.message


def test_name_must_match_the_folder_and_front_matter_must_be_closed(tmp_path: Path) -> None:
    other = write_skill(tmp_path, "folder-name")
    text = (other / "SKILL.md").read_text().replace("name: folder-name", "name: other-name")
    (other / "SKILL.md").write_text(text)
    mismatch = parse_skill(other, "user")
    assert isinstance(mismatch, SkillProblem) and "folder" in mismatch.message
    (other / "SKILL.md").write_text("---\nname: folder-name\ndescription: x\nbody\n")
    unclosed = parse_skill(other, "user")
    assert isinstance(unclosed, SkillProblem) and "never closed" in unclosed.message
    (other / "SKILL.md").write_text("no front matter")
    missing = parse_skill(other, "user")
    assert isinstance(missing, SkillProblem) and missing.line == 1


def test_an_oversized_skill_is_refused_without_reading_it(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "huge", body="x" * (MAX_SKILL_BYTES + 1))
    problem = parse_skill(folder, "user")
    assert isinstance(problem, SkillProblem)
    assert "too large" in problem.message


def test_a_multi_line_description_is_folded_to_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "folded"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: folded\ndescription: >\n  first part\n  second part\n---\nbody\n"
    )
    skill = parse_skill(folder, "bundled")
    assert isinstance(skill, Skill)
    assert skill.description == "first part second part"
