"""``ModelClient``: Claude through the official SDK, always streaming, on trio.

One call = ``await client.complete(request, on_event)``. Events arrive through
the synchronous ``on_event`` callback as they stream (a consumer that needs to
await forwards them into its own bounded channel). The return value is the
complete, checked ``ModelResponse``; every failure is a classified
``ModelError``.

Cancellation: the SDK stream is always consumed inside ``async with``, so
cancelling the caller's scope closes the HTTP connection at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anthropic
import httpx2
import trio
from anthropic.types import Message as WireMessage

from .convert import StreamAssembler, WireCache, estimate_tokens, request_body
from .errors import FailureReason, ModelError, RecoveryHints, StreamProblem, classify
from .policy import RetryPolicy, StalePolicy
from .pools import SdkPools
from .types import AttemptFailed, MessageComplete, ModelEvent, ModelRequest, ModelResponse

log = logging.getLogger("hermes.model")

EventSink = Callable[[ModelEvent], None]


def _ignore(_: ModelEvent) -> None:
    pass


class ModelClient:
    """A streaming Messages API client with our retry, fallback and stale-stream policies.

    Use as ``async with ModelClient(api_key=...) as client:`` (or call
    ``aclose()``): the HTTP client is always closed.
    """

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        stale: StalePolicy | None = None,
        fallback_models: Sequence[str] = (),
        trust_env: bool = True,
        connect_timeout: float = 10.0,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self.stale = stale or StalePolicy()
        self.fallback_models = tuple(fallback_models)
        self._sdk = SdkPools(
            api_key=api_key,
            base_url=base_url,
            trust_env=trust_env,
            connect_timeout=connect_timeout,
        )
        self._wire = WireCache()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client (bounded and shielded: cleanup must finish)."""
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await self._sdk.aclose()

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        """Stream one reply, retrying and falling back per policy; return it complete.

        ``on_event`` receives every stream event; after an ``AttemptFailed`` event
        the consumer must drop what that attempt streamed.
        """
        sink = on_event or _ignore
        deadline = trio.current_time() + self.retry.deadline
        models = (request.model, *[m for m in self.fallback_models if m != request.model])
        stale_after = self.stale.timeout(estimate_tokens(request, self._wire))
        attempts = 0
        malformed = 0
        last: ModelError | None = None
        for position, model in enumerate(models):
            for retry in range(self.retry.max_attempts):
                attempts += 1
                lenient = (
                    malformed >= self.retry.malformed_retries
                    or retry + 1 >= self.retry.max_attempts
                )
                try:
                    return await self._attempt(
                        request, model, sink, attempts, stale_after, deadline, lenient
                    )
                except ModelError as error:
                    last = error
                    if error.reason is FailureReason.MALFORMED_OUTPUT:
                        malformed += 1
                    if not error.hints.retryable or retry + 1 >= self.retry.max_attempts:
                        break
                    delay = self.retry.delay(retry, error.hints.retry_after)
                    if trio.current_time() + delay >= deadline:
                        raise _out_of_time(error, self.retry.deadline) from error
                    log.warning(
                        "model %s attempt %d failed (%s); retry in %.2fs",
                        model,
                        attempts,
                        error,
                        delay,
                    )
                    sink(AttemptFailed(attempts, error.reason.value, delay, model))
                    await trio.sleep(delay)
            assert last is not None
            if not last.hints.should_fallback or position + 1 >= len(models):
                raise last
            log.warning(
                "model %s failed (%s); falling back to %s", model, last, models[position + 1]
            )
            sink(AttemptFailed(attempts, last.reason.value, 0.0, models[position + 1]))
        assert last is not None  # pragma: no cover - the loop always returns or raises
        raise last

    async def _attempt(
        self,
        request: ModelRequest,
        model: str,
        sink: EventSink,
        attempts: int,
        stale_after: float,
        deadline: float,
        lenient: bool = False,
    ) -> ModelResponse:
        """One streamed request. Raises ``ModelError``; never swallows cancellation.

        ``lenient``: unusable tool arguments are listed in the response rather than raised.
        """
        assembler = StreamAssembler(lenient_tool_input=lenient)
        body = request_body(request, model, self._wire)
        # The watchdog is re-armed at most every 5% of its window: moving a
        # deadline costs trio some work, and every event would otherwise pay it.
        rearm_after = stale_after * 0.05
        armed_at = trio.current_time()
        with (
            trio.CancelScope(deadline=min(armed_at + stale_after, deadline)) as watchdog,
            self._sdk.lease() as sdk,  # busy until the stream is closed
        ):
            try:
                # The body goes as bytes: the SDK then sends it as is. Passed as params,
                # it builds a deep copy of them (``copy_tree``) that lives as long as the
                # stream; see ``WireCache`` for why that mattered.
                stream = await sdk.post(
                    "/v1/messages",
                    cast_to=WireMessage,
                    content=body,
                    stream=True,
                    stream_cls=anthropic.AsyncStream[object],  # events as decoded JSON
                )
                problem: StreamProblem | None = None
                async with stream:
                    async for raw in stream:
                        now = trio.current_time()
                        if now - armed_at > rearm_after:
                            armed_at = now
                            watchdog.deadline = min(now + stale_after, deadline)
                        if problem is not None:
                            continue
                        try:
                            events = assembler.feed(raw)
                        except StreamProblem as exc:
                            # Read to the end rather than leave the SDK's chain of
                            # async generators for the garbage collector.
                            problem = exc
                            continue
                        for event in events:
                            sink(event)
                if problem is not None:
                    raise problem
                response = assembler.finish(attempts)
            except (anthropic.APIError, httpx2.HTTPError, StreamProblem) as exc:
                raise classify(exc, model) from exc
        if watchdog.cancelled_caught:
            if trio.current_time() >= deadline:
                raise ModelError(
                    FailureReason.TIMEOUT,
                    f"call deadline of {self.retry.deadline:g}s reached",
                    model=model,
                    hints=RecoveryHints(),
                )
            raise ModelError(
                FailureReason.TIMEOUT, f"no stream event for {stale_after:g}s", model=model
            )
        return self._checked(response, model, sink)

    def _checked(self, response: ModelResponse, model: str, sink: EventSink) -> ModelResponse:
        if response.stop_reason == "refusal":
            raise ModelError(
                FailureReason.REFUSAL, "the model refused", model=model, partial=response
            )
        if response.stop_reason == "model_context_window_exceeded":
            raise ModelError(
                FailureReason.CONTEXT_OVERFLOW,
                "the context window was exceeded",
                model=model,
                partial=response,
            )
        sink(MessageComplete(response))
        return response


def _out_of_time(error: ModelError, deadline: float) -> ModelError:
    return ModelError(
        error.reason,
        f"{error.message} (no time left for a retry within the {deadline:g}s call deadline)",
        hints=RecoveryHints(),
        status=error.status,
        request_id=error.request_id,
        model=error.model,
    )
