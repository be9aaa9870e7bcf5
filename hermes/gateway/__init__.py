"""The gateway: WebSocket and HTTP surfaces of the daemon (``docs/protocol.md``).

| module | one job |
|---|---|
| ``frames.py`` | request/response frames, JSON and msgpack (light: the CLI uses it) |
| ``protocol.py`` | session events as frames |
| ``methods.py`` | the method table shared by WebSocket and HTTP |
| ``server.py`` | ``GatewayActor``, the accept loop, one actor per connection |
| ``wire_http.py`` / ``http_api.py`` | the request head, token check, the HTTP routes and SSE |
| ``client.py`` | the WebSocket client (CLI, tests, benchmark) |
"""
