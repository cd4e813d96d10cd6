"""KEDA: a ScaledObject's operator (scale to and from zero on its triggers) and the HPA it makes.

One module per concept, as upstream splits them: `scalers` (each trigger's metric and activity,
pkg/scalers), `executor` (`RequestScale`, pkg/scaling/executor), `fallback` (pkg/fallback), `formula`
(scalingModifiers, pkg/scaling/modifiers), `cron` (robfig/cron's schedules) and `controller` (the
scale loop and the metrics adapter, on the clock).
"""
