"""Shared pytest configuration for the graphagent test suite."""
