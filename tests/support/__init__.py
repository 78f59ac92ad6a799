"""Test helpers shared across tiers: real servers and certificates, never mocks of our code."""
