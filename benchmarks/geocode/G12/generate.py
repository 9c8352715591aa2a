# A classified land-use raster (uint8 codes, 25 m, EPSG:3035) and its legend.
r = rng()
rows, cols = 70, 90
f1 = smooth_field((rows, cols), r, sigma=7)
f2 = smooth_field((rows, cols), r, sigma=11)
lu = np.full((rows, cols), 2, dtype="uint8")   # agriculture
lu[f1 > 0.65] = 3                              # forest
lu[f2 < 0.25] = 4                              # water
lu[(f1 < 0.28) & (f2 > 0.5)] = 1               # urban
write_raster("data/landuse.tif", lu, from_origin(4300000.0, 3100000.0, 25.0, 25.0), "EPSG:3035", nodata=0, dtype="uint8")
import json as _json
with open("data/legend.json", "w") as f:
    _json.dump({"1": "urban", "2": "agriculture", "3": "forest", "4": "water"}, f, indent=1)
