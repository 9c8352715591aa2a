# A 4-band 100 x 100 image (blue, green, red, NIR; 10 m, EPSG:32632) over
# water, forest, cropland and built-up areas, and labelled training points.
r = rng()
rows = cols = 100
f1 = smooth_field((rows, cols), r, sigma=9)
f2 = smooth_field((rows, cols), r, sigma=14)
label = np.full((rows, cols), 3)           # cropland
label[f1 > 0.62] = 2                      # forest
label[f2 < 0.22] = 1                      # water
label[(f1 < 0.3) & (f2 > 0.55)] = 4       # built-up
means = {1: (60, 50, 30, 20), 2: (30, 60, 35, 170), 3: (50, 80, 70, 120), 4: (90, 95, 100, 80)}
bands = np.zeros((4, rows, cols))
for k, m in means.items():
    for b in range(4):
        bands[b][label == k] = m[b]
bands += r.normal(0, 6, bands.shape)
transform = from_origin(400000.0, 5300000.0, 10.0, 10.0)
write_raster("data/scene.tif", np.clip(bands, 0, 255).astype("uint8"), transform, "EPSG:32632")
idx = r.choice(rows * cols, 300, replace=False)
rr, cc = np.unravel_index(idx, (rows, cols))
xs = 400000 + (cc + 0.5) * 10
ys = 5300000 - (rr + 0.5) * 10
names = {1: "water", 2: "forest", 3: "crop", 4: "built"}
gpd.GeoDataFrame({"class_id": label[rr, cc], "class_name": [names[k] for k in label[rr, cc]]}, geometry=gpd.points_from_xy(xs, ys), crs=32632).to_file("data/training.geojson", driver="GeoJSON")
