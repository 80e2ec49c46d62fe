"""Synthesise the audio of a transcript note and write its turn timestamps.

The example corpus has one transcript whose recording is *synthesised* (espeak-ng),
not recorded: this script reads the note's speaker turns
(``[hh:mm:ss] **Speaker** : words``), speaks each with a voice per speaker, joins
them with short silences, encodes the result as Ogg Opus, and rewrites each turn's
timestamp with the second at which it really starts in the audio, and the
note's ``duration:`` — so the timing is computed, never typed (INV-18).

    python scripts/synthesise_transcript.py content/notes/cvl-2025-10-16-transcription.md

Needs Debian's espeak-ng and opus-tools (``apt-get install espeak-ng opus-tools``).
The audio goes where the note's ``media:`` field points.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from generator.files import read_text_file, write_atomic
from generator.writes import PlannedWrite, read_back, write_content

TURN_LINE = re.compile(r"^\[(\d{2}):(\d{2}):(\d{2})\] \*\*(?P<speaker>[^*]+)\*\* : (?P<text>.+)$")
MEDIA = re.compile(r"^media:\s*(\S+)\s*$", re.MULTILINE)
DURATION = re.compile(r"^duration:\s*\S+\s*$")
VOICES = ["fr+f3", "fr+m3", "fr+f2", "fr+m1", "fr+f4", "fr+m5", "fr+f1", "fr+m7"]
LEAD_SECONDS = 0.5
GAP_SECONDS = 0.6
WORDS_PER_MINUTE = "165"


def speak(text: str, voice: str, target: Path) -> None:
    subprocess.run(["espeak-ng", "-v", voice, "-s", WORDS_PER_MINUTE, "-w", str(target), text], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("note", type=Path, help="the transcript note (.md)")
    args = parser.parse_args(argv)
    read, problems = read_text_file(args.note.read_bytes(), args.note.name)  # its BOM and CRLF kept on write
    if read is None:
        print("; ".join(p.format_text() for p in problems), file=sys.stderr)
        return 1
    text = read.text
    media = MEDIA.search(text)
    if media is None:
        print(f"{args.note}: no 'media:' field to write the audio to", file=sys.stderr)
        return 1
    audio = (args.note.parent / media.group(1)).resolve()
    lines = text.split("\n")
    turns = [(index, TURN_LINE.match(line)) for index, line in enumerate(lines)]
    turns = [(index, match) for index, match in turns if match]
    if not turns:
        print(f"{args.note}: no speaker turn '[hh:mm:ss] **Speaker** : …' found", file=sys.stderr)
        return 1
    voices: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        frames: list[bytes] = []
        params = None
        position = 0.0
        starts: list[int] = []
        for number, (_index, match) in enumerate(turns):
            voice = voices.setdefault(match["speaker"], VOICES[len(voices) % len(VOICES)])
            wav = Path(tmp) / f"turn-{number:03d}.wav"
            speak(match["text"], voice, wav)
            with wave.open(str(wav), "rb") as reader:
                if params is None:
                    params = reader.getparams()
                    frames.append(b"\x00" * int(params.framerate * LEAD_SECONDS) * params.sampwidth)
                    position = LEAD_SECONDS
                starts.append(int(position))
                data = reader.readframes(reader.getnframes())
                frames.append(data)
                position += reader.getnframes() / params.framerate
            silence = int(params.framerate * GAP_SECONDS)
            frames.append(b"\x00" * silence * params.sampwidth)
            position += silence / params.framerate
        joined = Path(tmp) / "all.wav"
        with wave.open(str(joined), "wb") as writer:
            writer.setparams(params)
            writer.writeframes(b"".join(frames))
        audio.parent.mkdir(parents=True, exist_ok=True)
        encoded = Path(tmp) / "all.ogg"
        subprocess.run(["opusenc", "--quiet", "--bitrate", "16", "--serial", "1", str(joined), str(encoded)],
                       check=True)
        write_atomic(audio, encoded.read_bytes())  # an asset, not a record: atomic, no read-back
    for (index, _match), start in zip(turns, starts, strict=False):
        stamp = f"[{start // 3600:02d}:{start % 3600 // 60:02d}:{start % 60:02d}]"
        lines[index] = stamp + lines[index][len("[00:00:00]"):]
    duration = f"duration: {position:.1f}"
    media_line = next(i for i, line in enumerate(lines) if MEDIA.match(line))
    duration_line = next((i for i, line in enumerate(lines) if DURATION.match(line)), None)
    if duration_line is None:
        lines.insert(media_line + 1, duration)
    else:
        lines[duration_line] = duration
    updated = "\n".join(lines)
    if updated != text:  # through the write seam: only the turns' stamps and the duration change
        content = next(p for p in args.note.resolve().parents if (p / "carnet.yaml").is_file())
        rel = args.note.resolve().relative_to(content).as_posix()
        old, _ = read_back(rel, args.note.read_bytes())
        # what it must mean: the same fields with the new duration, and the body with its new stamps
        closing = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
        meant = {"front_matter": dict(old["front_matter"], duration=round(position, 1)),
                 "body": "\n".join(lines[closing + 1:])}
        write_content(content, "scripts/synthesise_transcript.py", PlannedWrite(
            rel, read.encode(updated), meant, frozenset({("front_matter", "duration"), ("body",)})))
    print(f"{audio}: {position:.1f} s, {len(turns)} turns, {audio.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
