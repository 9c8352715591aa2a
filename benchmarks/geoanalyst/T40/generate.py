r = rng()
shape = (220, 210)
transform = from_origin(-18.0, 18.0, 0.25, 0.25)
land = smooth_field(shape, r, 18) > 0.25
belt = blob(shape, (90, 100), 60)
pr2000 = np.clip(0.05 + 0.7 * belt + 0.15 * smooth_field(shape, rng(1), 6), 0, 1)
change = -0.25 * blob(shape, (70, 60), 35) - 0.15 * smooth_field(shape, rng(2), 10) + 0.4 * blob(shape, (150, 150), 25)
pr2015 = np.clip(pr2000 + change, 0, 1)
for year, a in [(2000, pr2000), (2015, pr2015)]:
    write_raster(f"data/2015_Nature_Africa_PR.{year}.tif", np.where(land, a, -9999).astype("float32"), transform, "EPSG:4326", nodata=-9999.0)
