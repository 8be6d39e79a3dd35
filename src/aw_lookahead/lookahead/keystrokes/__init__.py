"""Keystrokes as an interactive bash reads them: readline's editing keys, history expansion.

:mod:`.reader` replays tmux-style keystroke actions through readline's default
bindings and returns the lines bash runs; :mod:`.history` is bash's history
expansion (``!!``, ``^a^b``, ``fc -s``); :mod:`.keynames` maps tmux key names to
the bytes a terminal sends.
"""
