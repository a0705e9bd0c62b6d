"""The analysis layer's errors: input that cannot be used, and templates that
cannot be loaded, compiled or rendered.

    AutoparserError (peg.errors)
    └── AnalysisError
        ├── InputError            requests, tools, messages, cases, lock files, outputs
        │   └── LimitConfigError  an AUTOPARSER_* limit set to an unusable value
        ├── ExportError           a format a response_template cannot express
        └── TemplateError
            ├── TemplateLoadError      the source cannot be read or holds no template
            ├── TemplateSyntaxError    not valid Jinja (line, column)
            └── TemplateRenderError    a render failed (line)
                ├── TemplateRaisedError  the template's own raise_exception
                ├── RenderLimitError     a sandbox limit (time, memory, size)
                └── SandboxViolation     something the sandbox forbids
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from peg.errors import AutoparserError


def one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message on one line, at most ``limit`` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class AnalysisError(AutoparserError):
    """An error of the analysis layer."""


class InputError(AnalysisError):
    """Input other than a template is unusable: a request, tools, messages, a case
    file, a lock file, a model output, an output path.

    A message that names a setting writes the library's name for it between
    backquotes (```update_lock` needs `lock```), and lists it in ``settings``;
    a front end spells it in its own terms with :meth:`phrased` (the CLI:
    ``--update-lock needs --lock FILE``)."""

    def __init__(self, message: str, settings: Sequence[str] = ()):
        super().__init__(message)
        #: the settings the message names, by the library's names for them
        self.settings = tuple(settings)

    def __reduce__(self) -> tuple[type[InputError], tuple[str, tuple[str, ...]]]:  # (from a worker process, settings and all)
        return (type(self), (str(self), self.settings))

    def phrased(self, names: Mapping[str, str]) -> str:
        """The message with each of its settings spelled as ``names`` says."""
        text = str(self)
        for setting in self.settings:
            if setting in names:
                text = text.replace(f"`{setting}`", names[setting])
        return text


class TemplateError(AnalysisError):
    """A template that cannot be loaded, compiled or rendered."""


class TemplateLoadError(TemplateError):
    """A template source could not be read (missing file, bad JSON, no template...)."""


class TemplateSyntaxError(TemplateError):
    """The template is not valid Jinja; carries line and column."""

    def __init__(self, message: str, name: str, line: int | None, column: int | None = None):
        where = f"{name}:{line}" if line else name
        if line and column:
            where += f":{column}"
        super().__init__(f"{where}: template syntax error: {message}")
        self.detail = message
        self.line = line
        self.column = column


class TemplateRenderError(TemplateError):
    """Rendering failed for a reason other than the template's own ``raise_exception``."""

    def __init__(self, message: str, name: str = "<template>", line: int | None = None):
        where = f"{name}:{line}" if line else name
        super().__init__(f"{where}: {message}")
        self.detail = message
        self.line = line


class TemplateRaisedError(TemplateRenderError):
    """The template called ``raise_exception(msg)``: carries its message and line."""

    def __init__(self, message: str, name: str = "<template>", line: int | None = None):
        super().__init__(f"template raised: {message}", name, line)
        self.template_message = message


class RenderLimitError(TemplateRenderError):
    """A render exceeded a sandbox limit (time, output size, string size, range)."""


class SandboxViolation(TemplateRenderError):
    """The template tried to reach something the sandbox forbids."""


class LimitConfigError(InputError):
    """A resource limit was configured with a value that is not usable."""


class ExportError(AnalysisError):
    """The template's output format cannot be written as a Hugging Face
    ``response_template`` (the message says what cannot be expressed)."""
