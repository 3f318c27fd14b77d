"""A selector of your own, as fsbench runs it: any scikit-learn estimator whose fit sets scores_.

Centroid spread: a feature scores the largest distance, in its own standard deviations, between
a class's mean and the overall mean, max_c |mean_c(x_j) - mean(x_j)| / std(x_j).
"""

import numpy as np
from sklearn.base import BaseEstimator


class CentroidSpread(BaseEstimator):
    def __init__(self, min_std: float = 1e-12):
        self.min_std = min_std

    def fit(self, X, y):
        X, y = np.asarray(X, dtype=float), np.asarray(y)
        centroids = np.stack([X[y == c].mean(axis=0) for c in np.unique(y)])
        spread = np.abs(centroids - X.mean(axis=0)).max(axis=0)
        self.scores_ = spread / np.maximum(X.std(axis=0), self.min_std)
        return self
