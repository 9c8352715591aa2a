import matplotlib.pyplot as plt
import rasterio
def read(name):
    with rasterio.open(f"data/{name}") as src:
        return src.read(1).astype("float64"), src.profile
rug, profile = read("ruggedness.tif"); dist, _ = read("distance.tif")
lc, _ = read("landCover_reclassified.tif"); pr, _ = read("Protected_Status_reclassified.tif")
def rescale(a, high_is_costly=True):
    s = 1 + 9 * (a - a.min()) / (a.max() - a.min())
    return s if high_is_costly else 11 - s
cost = 1.0 * rescale(dist, False) + 1.25 * rescale(rug) + 1.0 * pr + 1.25 * lc
profile.update(dtype="float32", nodata=None)
with rasterio.open("pred_results/cost_surface.tif", "w", **profile) as dst:
    dst.write(cost.astype("float32"), 1)
fig, ax = plt.subplots(figsize=(9, 7))
im = ax.imshow(cost, cmap="viridis"); fig.colorbar(im, ax=ax, label="movement cost")
ax.set_title("Mountain lion movement cost (weighted sum)")
fig.savefig("pred_results/mountainLionCorridor.png", dpi=110, bbox_inches="tight")
print(cost.min(), cost.max())
