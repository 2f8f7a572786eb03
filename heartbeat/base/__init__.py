"""The ground floor: the error family and its exit codes, safe file writes and reads, secret redaction.

Owns ``errors`` (:class:`~heartbeat.base.errors.HeartbeatError` and its
children, ``EXIT_CODES``), ``fsutil`` (atomic 0600 writes, reads that refuse
FIFOs and devices, temp sweeping) and ``redact`` (cutting secrets out of
text, URLs and events). Imports nothing else of heartbeat: every other
package stands on it.
"""
