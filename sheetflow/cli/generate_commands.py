"""``sheetflow generate``, ``sheetflow lock`` and ``sheetflow verify``."""

from __future__ import annotations

from pathlib import Path

import click

from ..hints import JUDGE_OUTPUTS
from ..words import counted
from .common import EXIT_DATA, EXIT_FAILED, Output, command, fail, warn_recovered


@command("generate")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Write packs/ and sealed/ here instead of the study folder "
              "(not in its returns/, packs/, sealed/ or out/).")
@click.option("--eml", "emails", is_flag=True,
              help="Also write one ready-to-send .eml draft per pack in packs/eml/.")
@click.option("--force", is_flag=True,
              help="Replace a seal made for a different version of the spec, or by the "
              "demo (a new secret).")
def generate_command(out: Output, directory: Path, out_dir: Path | None, emails: bool,
                     force: bool) -> None:
    """Write one locked workbook per rater, the blinded manifest and the sealed key.

    Also creates DIRECTORY/returns/, where returned workbooks go.

    Example: sheetflow generate my-study --eml
    """
    from ..packs.generate import generate_packs

    progress = out.progress("writing packs")
    result = generate_packs(directory, out_dir, emails=emails, force=force,
                            progress=progress)
    progress.close()
    for pack in result.packs:
        sitting = " (sitting 2: send at least 24 h after sitting 1 is returned)" \
            if pack.sitting == 2 else ""
        out.say(f"pack       {pack.path.name}: {counted(pack.cards, 'case')} for {pack.rater_id}"
                f"{sitting}")
    out.say(f"manifest   {result.manifest_path.name} (blinded; collect uses it)")
    apart = sum(p.parent.name.startswith("sitting-") for p in result.eml_paths)
    # a judge's pack is filled by import-judges, never mailed: said once, not per judge
    judged = (f" (none for the {counted(len(result.judges), 'judge')}: import-judges "
              "fills their packs)") if emails and result.judges else ""
    out.say(f"mailing    {result.mailing_list_path.name}"
            + (f", {counted(len(result.eml_paths), '.eml draft')}" if emails else "")
            + (f" ({apart} for sitting 2 apart in eml/sitting-2/)" if apart else "")
            + judged)
    out.say("sealed     secret, key.json, key.sha256, plan.lock.json (keep sealed/ private: "
            "the secret and the key unblind the study; publish the key's hash below)")
    out.say(f"returns    {result.returns_dir} (save returned workbooks here)")
    if result.removed:
        out.say(removed_line(result.removed, result.manifest_path.parent))
    for warning in result.warnings:
        out.warn(warning)
    out.say("publish before scoring:")
    out.say(f"  {result.key_line()}")
    out.say("keep from the raters until they have returned (it lets guesses about the "
            "arms be tested):")
    out.say(f"  {result.spec_line()}")
    elsewhere = out_dir is not None and out_dir.resolve() != directory.resolve()
    # status, collect, analyze and import-judges read packs/ and sealed/ in the study
    # folder only
    move = f"move {out_dir}/packs and {out_dir}/sealed into {directory}" if elsewhere else ""
    step = next_step(directory, [p.rater_id for p in result.packs], result.judges, move,
                     result.at_lock)
    out.headline(f"{counted(len(result.packs), 'pack')} written; next: {step}", fg="green")
    out.json({"ok": True, "packs": [{"file": str(p.path), "rater_id": p.rater_id,
                                     "sitting": p.sitting, "cases": p.cards}
                                    for p in result.packs],
              "judges": result.judges, "next": step,
              "manifest": str(result.manifest_path), "returns": str(result.returns_dir),
              "mailing_list": str(result.mailing_list_path),
              "eml": [str(p) for p in result.eml_paths], "hashes": result.hash_lines(),
              "removed": [{"rater_id": r, "file": str(p)} for r, p in result.removed]})


def removed_line(removed: list[tuple[str, Path]], packs_dir: Path) -> str:
    """The packs and drafts of the previous generate the new set removed, by rater:
    ``removed 1 pack and 1 draft of the previous generate: EV-03 (a.xlsx, eml/a.eml)``."""
    drafts = sum(p.suffix == ".eml" for _, p in removed)
    whose: dict[str, list[str]] = {}
    for rater, path in removed:
        whose.setdefault(rater, []).append(path.relative_to(packs_dir).as_posix())
    what = " and ".join(counted(n, noun) for n, noun in
                        ((len(removed) - drafts, "pack"), (drafts, "draft")) if n)
    return (f"removed    {what} of the previous generate: "
            + "; ".join(f"{r} ({', '.join(files)})" for r, files in whose.items()))


def next_step(directory: Path, raters: list[str], judges: list[str], move: str = "",
              at_lock: list[str] | None = None) -> str:
    """What to do with the packs just written, for the headline.

    Parameters
    ----------
    directory : Path
        The study folder.
    raters : list of str
        The rater id of each pack written.
    judges : list of str
        The raters whose packs ``import-judges`` fills: nothing is sent to them.
    move : str
        The step that brings packs/ and sealed/ into the study folder, when written
        elsewhere (``--out``).
    at_lock : list of str, optional
        Second raters whose packs ``sheetflow lock`` writes after the primary returns
        are collected (a subset drawn at data lock): named as the step after.

    Returns
    -------
    str
        For example ``send them, then sheetflow status my-study`` (``send it`` for one
        pack).
    """
    later = (f"; once the primary returns are collected, sheetflow lock {directory} draws "
             f"the second-rater subset and writes the packs of {', '.join(at_lock)}"
             if at_lock else "")
    return _first_step(directory, raters, judges, move) + later


def _first_step(directory: Path, raters: list[str], judges: list[str], move: str) -> str:
    """What to do with the packs just written (see :func:`next_step`)."""
    people = sorted(set(raters) - set(judges))
    then = f"{move}, then " if move else ""
    # without the run's window import-judges fills the workbooks but writes no pilot
    # summary and exits 1, so the step names it
    imported = (f"sheetflow import-judges {directory} {JUDGE_OUTPUTS} --execution-window "
                "'START to END'")
    what = "(the judges' JSONL outputs and the run's UTC times)"
    if not people:
        return f"{then}{imported} {what}, then sheetflow collect {directory}"
    if not judges:
        them = "it" if len(raters) == 1 else "them"  # "1 pack written; next: send it"
        return f"send {them}, then {then}{'run ' if move else ''}sheetflow status {directory}"
    return (f"send the packs of {', '.join(people)}; {then}{imported} for "
            f"{', '.join(judges)} {what}; then sheetflow status {directory}")


@command("verify")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="The folder holding sealed/ when it is not the study folder.")
@click.option("--key-sha256", "published", default=None, metavar="HEX",
              help="The key hash published before scoring, to compare with the key.")
@click.option("--lock-sha256", "published_lock", default=None, metavar="HEX",
              help="002: the lock record's hash published at the data lock.")
def verify_command(out: Output, directory: Path, out_dir: Path | None,
                   published: str | None, published_lock: str | None) -> None:
    """Check the sealed key against its published hash and the spec against the lock.

    Also checks that each pack workbook packs/manifest.json lists is in packs/ with the
    sha256 generate recorded for it (a study generated before sheetflow recorded them
    gets a note: presence only). Exits 3 when the seal is broken or a pack is missing
    or changed. A study sealed by the demo, with its public secret, gets a warning.

    Example: sheetflow verify my-study --key-sha256 3f5a...
    """
    from ..collect.outputs import check_run
    from ..packs.seal import check_published, verify_seal

    check_published(published_lock, "--lock-sha256")
    if out_dir is not None and out_dir.is_dir():  # the study folder's is recovered already
        warn_recovered(out, out_dir, whole_study=False)
    check = verify_seal(directory, out_dir, published=published,
                        published_lock=published_lock, pack_files=True)
    if not check.ok:  # what was not checked is said, pass or fail
        fail(EXIT_FAILED, check.problems, notes=check.notes)
    for note in check.notes:
        out.say(f"note: {note}")
    out.say(f"key sha256  {check.key_sha256}")
    if check.lock_record_sha256:
        out.say(f"lock record {check.lock_record_sha256}")
    out.say(f"spec hash   {check.spec_hash}")
    for line in check.checked:
        out.say(f"checked     {line}")
    mixed = check_run(out_dir or directory)
    if mixed:
        fail(EXIT_DATA, ["the seal holds, but " + mixed[0], *mixed[1:]])
    if check.demo_secret:  # the seal holds, but it hides nothing from anyone
        out.warn(check.demo_line())
    out.headline("seal ok", fg="green")
    out.json({"ok": True, "key_sha256": check.key_sha256, "spec_hash": check.spec_hash,
              "inputs": check.inputs, "notes": check.notes, "checked": check.checked})


@command("lock")
def lock_command(out: Output, directory: Path) -> None:
    """Draw the second-rater subset from completed items and generate its packs (002).

    Run it once the primary returns are collected; the subset is ranked by sha256 of
    the frozen plan hash within each stratum and recorded in sealed/. It writes (or
    replaces) the second raters' invitation drafts in packs/eml/, their packs
    attached; every other draft there is left as it was.

    Example: sheetflow lock my-study
    """
    from ..collect.data_lock import lock_second_rater

    result = lock_second_rater(directory)
    doc = {"ok": True, "already": result.already, "completed": result.completed,
           "selected": result.selected, "selection": str(result.selection_path),
           "packs": [str(p) for p in result.packs],
           "key_sha256_before": result.key_sha256_before, "key_sha256": result.key_sha256,
           "lock_record_sha256": result.record_sha256,
           "drafts": [str(d) for d in result.drafts]}
    if result.already:
        out.headline(f"already locked: {len(result.selected)} items in "
                     f"{result.selection_path.name}; nothing changed")
        out.json(doc)
        return
    out.say(f"completed  {len(result.completed)} items (every primary rater scored them)")
    out.say(f"selected   {len(result.selected)}: {', '.join(result.selected)}")
    for pack in result.packs:
        out.say(f"pack       {pack.name} (second rater)")
    for draft in result.drafts:
        out.say(f"draft      {draft} (the invitation, the pack attached)")
    for warning in result.warnings:
        out.warn(warning)
    out.say(f"sealed     {result.selection_path.name} (+ .sha256)")
    out.say("the key sealed at generate is unchanged; publish the lock's record beside it:")
    out.say(f"  {result.key_sha256}  key.json (as published at generate)")
    out.say(f"  {result.record_sha256}  lock-record.json (the second raters' packs)")
    out.headline(f"locked: {len(result.selected)} of {len(result.completed)} completed items "
                 "for the second rater")
    out.json(doc)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(generate_command)
    group.add_command(lock_command)
    group.add_command(verify_command)
