print("monarch-bundle-worker: not built yet")
