# A subsiding coastal study area: 2050 elevation (cm, UTM 18N) and building footprints.
def make_flood_data():
    r = rng()
    shape = (220, 300)
    transform = from_origin(380_000, 4_080_000, 10, 10)
    rows, cols = np.indices(shape)
    elev = 250 - 3.2 * cols + 120 * smooth_field(shape, r, 15) - 220 * blob(shape, (150, 80), 40)
    write_raster("data/Elevation_2050.tif", elev.astype("float32"), transform, "EPSG:32618", nodata=-9999.0)
    bx, by = [], []
    for i in range(14):
        for j in range(10):
            bx.append(380_000 + 120 + i * 205 + r.uniform(-30, 30)); by.append(4_080_000 - 120 - j * 205 + r.uniform(-30, 30))
    polys = [shapely.affinity.rotate(shapely.box(x - w, y - h, x + w, y + h), a, use_radians=False)
             for x, y, w, h, a in zip(bx, by, r.uniform(8, 25, len(bx)), r.uniform(6, 18, len(bx)), r.uniform(0, 90, len(bx)))]
    b = gpd.GeoDataFrame(geometry=polys, crs=32618)
    b["Shape_Leng"] = b.geometry.length.round(3); b["Shape_Area"] = b.geometry.area.round(3)
    b.to_file("data/StudyAreaBuildings.shp")
