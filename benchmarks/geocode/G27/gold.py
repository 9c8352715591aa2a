import json
with rasterio.open("data/landuse.tif") as src:
    lu = src.read(1)
    transform = src.transform
    crs = src.crs
with open("data/legend.json") as f:
    legend = json.load(f)
info = [lu.shape[0], lu.shape[1], len(legend)]
# %%
classified = lu > 0
class_share = {name: round(float((lu == int(code)).sum() / classified.sum() * 100), 2) for code, name in legend.items()}
# %%
from scipy import ndimage
def mode(v):
    vals, counts = np.unique(v, return_counts=True)
    return vals[np.argmax(counts)]
smooth = ndimage.generic_filter(lu, mode, size=3, mode="nearest")
n_changed = int((smooth != lu).sum())
# %%
forest_code = int([c for c, n in legend.items() if n == "forest"][0])
forest = lu == forest_code
pairs = (forest[:, 1:] != forest[:, :-1]).sum() + (forest[1:, :] != forest[:-1, :]).sum()
forest_edge_m = int(pairs) * 25
# %%
water_code = int([c for c, n in legend.items() if n == "water"][0])
urban_code = int([c for c, n in legend.items() if n == "urban"][0])
dist = ndimage.distance_transform_edt(lu != water_code, sampling=25)
urban_to_water_m = round(float(dist[lu == urban_code].mean()), 1)
# %%
patch_counts = {name: int(ndimage.label(lu == int(code), structure=np.ones((3, 3)))[1]) for code, name in legend.items()}
# %%
r4, c4 = lu.shape[0] // 4, lu.shape[1] // 4
blocks = lu[:r4 * 4, :c4 * 4].reshape(r4, 4, c4, 4).transpose(0, 2, 1, 3).reshape(r4, c4, 16)
coarse = np.array([[np.bincount(b).argmax() for b in row] for row in blocks], dtype="uint8")
coarse_shape = list(coarse.shape)
# %%
coarse_share = {name: round(float((coarse == int(code)).mean() * 100), 2) for code, name in legend.items()}
# %%
wl, wn = ndimage.label(lu == water_code, structure=np.ones((3, 3)))
largest_water_ha = round(float(np.bincount(wl.ravel())[1:].max() * 625 / 10000), 4)
# %%
forest_to_urban_m = round(float(ndimage.distance_transform_edt(lu != urban_code, sampling=25)[forest].mean()), 1)
# %%
h = (lu[:, 1:] != lu[:, :-1]) & (lu[:, 1:] > 0) & (lu[:, :-1] > 0)
v = (lu[1:, :] != lu[:-1, :]) & (lu[1:, :] > 0) & (lu[:-1, :] > 0)
transitions = int(h.sum() + v.sum())
