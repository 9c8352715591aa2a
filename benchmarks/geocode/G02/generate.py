# A 120 x 150 DEM (30 m cells, UTM 10N) of a ridge-and-valley landscape and
# three watershed polygons covering it.
r = rng()
rows, cols = 120, 150
yy, xx = np.mgrid[0:rows, 0:cols]
dem = 400 + 3.0 * yy + 180 * smooth_field((rows, cols), r, sigma=10) + 90 * np.sin(xx / 14.0) ** 2
transform = from_origin(550000.0, 4200000.0, 30.0, 30.0)
write_raster("data/dem.tif", dem.astype("float32"), transform, "EPSG:32610", nodata=-9999.0)
x0, y1 = 550000.0, 4200000.0
w, h = cols * 30.0, rows * 30.0
sheds = [
    Polygon([(x0, y1), (x0 + w * 0.4, y1), (x0 + w * 0.35, y1 - h), (x0, y1 - h)]),
    Polygon([(x0 + w * 0.4, y1), (x0 + w * 0.75, y1), (x0 + w * 0.7, y1 - h), (x0 + w * 0.35, y1 - h)]),
    Polygon([(x0 + w * 0.75, y1), (x0 + w, y1), (x0 + w, y1 - h), (x0 + w * 0.7, y1 - h)]),
]
gpd.GeoDataFrame({"shed_id": ["W1", "W2", "W3"]}, geometry=sheds, crs=32610).to_file("data/watersheds.shp")
