import matplotlib.pyplot as plt
from matplotlib.colors import TwoSlopeNorm
import rasterio
with rasterio.open("data/2015_Nature_Africa_PR.2000.tif") as a, rasterio.open("data/2015_Nature_Africa_PR.2015.tif") as b:
    p0, p1 = a.read(1, masked=True), b.read(1, masked=True); profile = a.profile
change = p1 - p0
profile.update(dtype="float32", nodata=-9999.0)
with rasterio.open("pred_results/malaria_change.tif", "w", **profile) as dst:
    dst.write(change.filled(-9999).astype("float32"), 1)
classes = np.digitize(change.filled(0), [-0.2, -0.05, 0.05, 0.2]) + 1
classes = np.where(change.mask, 0, classes).astype("uint8")
profile.update(dtype="uint8", nodata=0)
with rasterio.open("pred_results/malaria_change_classes.tif", "w", **profile) as dst:
    dst.write(classes, 1)
print(np.unique(classes, return_counts=True))
fig, ax = plt.subplots(figsize=(9, 9))
im = ax.imshow(change, cmap="RdBu_r", norm=TwoSlopeNorm(0, -0.5, 0.5))
fig.colorbar(im, ax=ax, label="change in prevalence (2015 − 2000)")
ax.set_title("Malaria prevalence change, children 2–10"); ax.set_axis_off()
fig.savefig("pred_results/malaria_change.png", dpi=110, bbox_inches="tight")
