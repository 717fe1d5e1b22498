"""The package version, in a leaf module so that any layer can read it without importing
`softrod` itself."""

__version__ = "0.1.0"
