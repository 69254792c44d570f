"""The socket ``tracescore serve`` hands uvicorn gives its connections TCP_NODELAY (without it a
reply on a kept-alive connection waited for the client's delayed ACK, ~40 ms a request)."""

from __future__ import annotations

import asyncio
import socket

from tracescore.server._listen import bind_socket


def test_accepted_connections_send_without_waiting_for_acks() -> None:
    async def accept_one() -> int:
        sock = bind_socket("127.0.0.1", 0)
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            accepted.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        # As uvicorn serves a socket it is given: asyncio's create_server(sock=...).
        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            flag = await asyncio.wait_for(accepted, 30)
            writer.close()
        return flag

    assert asyncio.run(accept_one()) != 0
