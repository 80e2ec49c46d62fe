"""``carnet mcp``: the published corpus as Model Context Protocol tools (read-only).

:mod:`generator.agents.tools` answers queries over the published model (pure);
:mod:`generator.agents.server` wires them to the official ``mcp`` SDK over stdio.
"""
