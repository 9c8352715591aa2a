# Iowa-like farmland (UTM 15N, 10 m): 4-band images (blue, green, red, NIR)
# before and after a hailstorm whose swath crosses the fields diagonally; the
# two images have different extents; field boundaries on a 9 × 9 grid.
r = rng()
x0, y0 = 420_000.0, 4_650_000.0
full = (480, 480)
ft = from_origin(x0, y0, 10, 10)
fields = grid_cells(x0 + 200, y0 - 4_200, x0 + 3_800, y0 - 200, 9, 9)
fields = [f.buffer(-8) for f in fields]
crop = r.choice(["corn", "soy", "bare"], len(fields), p=[0.6, 0.32, 0.08])
rows, cols = np.indices(full)
xs = x0 + 10 * cols + 5; ys = y0 - 10 * rows - 5
ndvi_like = np.full(full, 0.15)
for f, c in zip(fields, crop):
    inside = shapely.contains_xy(f, xs, ys)
    ndvi_like[inside] = {"corn": 0.85, "soy": 0.7, "bare": 0.2}[c]
ndvi_like += 0.05 * (smooth_field(full, r, 5) - 0.5)
axis = (xs - x0) - (y0 - ys) * 0.8 - 800
swath = np.exp(-(axis / 900.0) ** 2)
def image(veg):
    red = 0.12 - 0.09 * veg; nir = 0.18 + 0.35 * veg
    bands = [0.05 + 0.02 * (1 - veg), 0.07 + 0.03 * veg, red, nir]
    # the same noise streams for both images: only the storm differs between them
    return np.stack([b + 0.005 * rng(2 + k).standard_normal(full) for k, b in enumerate(bands)])
before = image(ndvi_like)
after = image(np.clip(ndvi_like - 0.55 * swath * (ndvi_like > 0.5), 0.05, 1))
write_raster("data/Before_Storm.tif", (before[:, 0:460, 5:475] * 10000).astype("uint16"), from_origin(x0 + 50, y0, 10, 10), "EPSG:26915")
write_raster("data/After_Storm.tif", (after[:, 60:440, 20:460] * 10000).astype("uint16"), from_origin(x0 + 200, y0 - 600, 10, 10), "EPSG:26915")
gpd.GeoDataFrame({"Field_ID": np.arange(1, len(fields) + 1), "Crop": crop, "Shape_Area": [f.area for f in fields]},
                 geometry=fields, crs=26915).to_file("data/Field_Boundaries.shp")
