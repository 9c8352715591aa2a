# Two 2-band (red, NIR) scenes of the same 90 x 90 area, 2019 and 2024, with
# clearing in two patches, and three district polygons.
r = rng()
rows = cols = 90
veg = 0.4 + 0.5 * smooth_field((rows, cols), r, sigma=8)
def scene(v, noise):
    red = 0.12 - 0.08 * v + noise.normal(0, 0.004, v.shape)
    nir = 0.15 + 0.35 * v + noise.normal(0, 0.006, v.shape)
    return (np.stack([red, nir]) * 10000).astype("uint16")
after = veg.copy()
after[10:30, 50:80] *= 0.25
after[60:75, 15:40] *= 0.4
t = from_origin(700000.0, 9000000.0, 20.0, 20.0)
write_raster("data/scene_2019.tif", scene(veg, rng(1)), t, "EPSG:32722")
write_raster("data/scene_2024.tif", scene(after, rng(2)), t, "EPSG:32722")
x0, y1, w = 700000.0, 9000000.0, cols * 20.0
d = [shapely.geometry.box(x0, y1 - w, x0 + w / 2, y1), shapely.geometry.box(x0 + w / 2, y1 - w / 2, x0 + w, y1), shapely.geometry.box(x0 + w / 2, y1 - w, x0 + w, y1 - w / 2)]
gpd.GeoDataFrame({"district": ["A", "B", "C"]}, geometry=d, crs=32722).to_file("data/districts.geojson", driver="GeoJSON")
