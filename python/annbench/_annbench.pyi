"""Type stubs of the Rust extension module ``annbench._annbench`` (checked against the
compiled module with ``python -m mypy.stubtest annbench._annbench``)."""

__all__ = [
    "__version__",
    "AnnbenchError",
    "DatasetError",
    "ConfigError",
    "ServerError",
    "BackendError",
    "ResultsError",
    "IoError",
    "cli_main",
]

__version__: str

class AnnbenchError(Exception):
    """Base class of every error annbench raises."""

class DatasetError(AnnbenchError): ...
class ConfigError(AnnbenchError): ...
class ServerError(AnnbenchError): ...
class BackendError(AnnbenchError): ...
class ResultsError(AnnbenchError): ...
class IoError(AnnbenchError, OSError): ...

def cli_main(argv: list[str]) -> int:
    """Runs the ``annbench`` command line in-process; ``argv`` starts with the program name."""
