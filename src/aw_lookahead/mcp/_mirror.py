"""What the proxy shows its clients of the downstream server: capabilities and schemas.

* :func:`mirroring_server_class` - a low-level ``Server`` whose
  ``tools.listChanged`` is the downstream's (read at each client's initialize).
* :func:`with_confirm_arg` - preview mode's optional ``_aw_confirm`` property
  in a mirrored input schema, so schema-strict clients can send the token.
"""

from __future__ import annotations

from typing import Any

__all__ = ["mirroring_server_class", "with_confirm_arg"]


def with_confirm_arg(tool: Any, name: str) -> Any:
    """``tool`` with ``name`` (``_aw_confirm``) as an optional string property (preview mode)."""
    schema = dict(tool.input_schema or {"type": "object"})
    props = dict(schema.get("properties") or {})
    props[name] = {
        "type": "string",
        "description": "aw-lookahead preview: the confirmation token from the preview result; "
        "send it with the same arguments to execute the call (removed before forwarding).",
    }
    schema["properties"] = props
    return tool.model_copy(update={"input_schema": schema})


def mirroring_server_class() -> Any:
    """A low-level ``Server`` whose ``tools.listChanged`` is the downstream's."""
    from mcp.server import Server
    from mcp.server.lowlevel.server import NotificationOptions

    class MirroringServer(Server[Any]):
        mirror: Any = None  # the Downstream whose capabilities are mirrored

        def get_capabilities(
            self,
            notification_options: Any = None,
            experimental_capabilities: Any = None,
            extensions: Any = None,
            *,
            protocol_version: str | None = None,
        ) -> Any:
            opts = notification_options or NotificationOptions()
            if self.mirror is not None:
                opts = NotificationOptions(
                    prompts_changed=opts.prompts_changed,
                    resources_changed=opts.resources_changed,
                    tools_changed=self.mirror.tools_list_changed,
                )
            return super().get_capabilities(
                opts, experimental_capabilities, extensions, protocol_version=protocol_version
            )

    return MirroringServer
