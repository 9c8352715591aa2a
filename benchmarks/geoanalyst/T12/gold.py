import matplotlib.pyplot as plt
import rasterio
from scipy.ndimage import generic_filter
with rasterio.open("data/Elevation.tif") as src:
    elev = src.read(1).astype("float64"); profile = src.profile
tri = generic_filter(elev, lambda w: np.sqrt(np.mean((w - w[4]) ** 2)), size=3, mode="nearest").astype("float32")
profile.update(dtype="float32", nodata=None)
with rasterio.open("pred_results/ruggedness.tif", "w", **profile) as dst:
    dst.write(tri, 1)
fig, ax = plt.subplots(figsize=(9, 7))
im = ax.imshow(tri, cmap="magma"); fig.colorbar(im, ax=ax, label="TRI (m)")
ax.set_title("Terrain Ruggedness Index")
fig.savefig("pred_results/ruggedness.png", dpi=110, bbox_inches="tight")
print(tri.min(), tri.max())
