"""Tests of the web dashboard, its JSON routes and the Grafana dashboard."""
