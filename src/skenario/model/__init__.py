"""The cluster world built from stocks: replicas, requests and their processing."""

from skenario.model.cluster import ClusterModel
from skenario.model.replicas import Replica
from skenario.model.requests import Request

__all__ = ["ClusterModel", "Replica", "Request"]
