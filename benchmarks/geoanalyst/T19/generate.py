# A Chesapeake-like bay in WGS 84 (built in UTM 18N metres): a long estuary
# with tributary arms, and dissolved-oxygen samples that are low over the deep
# central channel and high near the mouth and the river inflows.
r = rng()
spine = LineString([(400_000, 4_380_000), (395_000, 4_300_000), (405_000, 4_220_000), (400_000, 4_140_000), (410_000, 4_090_000)])
widths = [8_000, 14_000, 18_000, 16_000, 22_000]
body = shapely.union_all([spine.interpolate(t, normalized=True).buffer(w) for t, w in zip(np.linspace(0, 1, 60), np.interp(np.linspace(0, 1, 60), np.linspace(0, 1, 5), widths))])
arms = [wiggly_line(p, q, rng(k + 1), 10, 0.08).buffer(2_500) for k, (p, q) in enumerate([
    ((398_000, 4_330_000), (350_000, 4_345_000)), ((400_000, 4_250_000), (350_000, 4_240_000)),
    ((405_000, 4_180_000), (345_000, 4_170_000)), ((402_000, 4_270_000), (440_000, 4_290_000))])]
bay = shapely.union_all([body] + arms).simplify(300)
bay_ll = gpd.GeoSeries([bay], crs=26918).to_crs(4326)
gpd.GeoDataFrame({"OBJECTID": [1], "Shape_Length": [bay.length], "Shape_Area": [bay.area]},
                 geometry=[shapely.geometry.MultiPolygon([bay_ll.iloc[0]]) if bay_ll.iloc[0].geom_type == "Polygon" else bay_ll.iloc[0]],
                 crs=4326).to_file("data/Bay.geojson", driver="GeoJSON")
n = 420
pts = points_in(bay, n, r)
x = np.array([p.x for p in pts]); y = np.array([p.y for p in pts])
d_spine = shapely.distance(spine, shapely.points(x, y))
t = np.array([spine.project(p, normalized=True) for p in pts])
channel = np.exp(-(d_spine / 6000.0) ** 2) * np.exp(-((t - 0.45) / 0.25) ** 2)
do = np.clip(8.5 - 6.5 * channel + 2.0 * (t > 0.85) * (t - 0.85) / 0.15 + r.normal(0, 0.6, n), 0.2, 12.0).round(2)
ll = gpd.GeoSeries(gpd.points_from_xy(x, y), crs=26918).to_crs(4326)
samples = gpd.GeoDataFrame({
    "OBJECTID": np.arange(1, n + 1), "HUC8": r.choice(["02060001", "02060003", "02060004", "02080101"], n), "EventId": 60_000 + np.arange(n),
    "Cruise": [f"BAY{700 + i % 20}" for i in range(n)], "Program": "TWQM", "Project": "MAIN", "Agency": "MDDNR", "Source": "MDDNR",
    "Station": [f"CB{1 + i % 8}.{1 + i % 5}" for i in range(n)], "SampleDate": [f"2019-0{6 + i % 3}-{10 + i % 18}" for i in range(n)],
    "TotalDepth": np.round(4 + 26 * channel + r.uniform(0, 3, n), 1), "UpperPycnocline": np.round(8 + r.uniform(0, 4, n), 1),
    "LowerPycnocline": np.round(14 + r.uniform(0, 5, n), 1), "Depth": np.round(3 + 22 * channel, 1), "Layer": "B",
    "SampleType": "ONE", "SampleReplicateType": "S1", "Parameter": "DO", "Qualifier": None, "MeasureValue": do, "Unit": "MG/L",
    "Method": "F01", "Lab": None, "Problem": None, "PrecisionPC": None, "BiasPC": None, "Details": None,
    "Latitude": ll.y.round(5), "Longitude": ll.x.round(5)}, geometry=ll.values, crs=4326)
samples.to_file("data/DissolvedO2.geojson", driver="GeoJSON")
