"""Billing runs: candidates (who may be due), issue (load, plan and write a chunk's bills), lifecycle
(runs, chunks, leases, sweeping, finishing) and held-bill exceptions."""
