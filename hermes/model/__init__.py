"""The model layer: Claude through the official SDK, streamed into our own types.

``ModelClient.complete(request, on_event)`` returns a checked ``ModelResponse``
or raises a classified ``ModelError`` (``reason`` + ``hints``). The transcript
types here are the daemon's; SDK objects never leave this package.
"""

from .client import EventSink, ModelClient
from .errors import FailureReason, ModelError, RecoveryHints, classify, retry_after_seconds
from .policy import RetryPolicy, StalePolicy
from .types import (
    AttemptFailed,
    ContentBlock,
    ImageBlock,
    Message,
    MessageComplete,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    RedactedThinkingBlock,
    SignatureDelta,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolInputDelta,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseComplete,
    ToolUseStart,
    Usage,
)

__all__ = [
    "AttemptFailed",
    "ContentBlock",
    "EventSink",
    "FailureReason",
    "ImageBlock",
    "Message",
    "MessageComplete",
    "ModelClient",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "ModelResponse",
    "RecoveryHints",
    "RedactedThinkingBlock",
    "RetryPolicy",
    "SignatureDelta",
    "StalePolicy",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolInputDelta",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "ToolUseComplete",
    "ToolUseStart",
    "Usage",
    "classify",
    "retry_after_seconds",
]
