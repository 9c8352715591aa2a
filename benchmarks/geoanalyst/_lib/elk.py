# Southwestern Alberta: GPS fixes of five elk over 2009, each with a summer and a winter range.
def make_elk_data():
    r = rng()
    rows, geoms = [], []
    start = pd.Timestamp("2009-01-01")
    oid = 1
    for e in range(5):
        winter = np.array([300_000 + e * 3500 + r.normal(0, 800), 5_480_000 + r.normal(0, 800)])
        summer = winter + np.array([r.uniform(6000, 11000), r.uniform(4000, 9000)])
        for i in range(300):
            t = start + pd.Timedelta(hours=29 * i + int(r.integers(0, 3)))
            is_summer = 5 <= t.month <= 9
            centre = summer if is_summer else winter
            x, y = centre + r.normal(0, 1200 if is_summer else 700, 2)
            rows.append({"OBJECTID": oid, "timestamp": t.strftime("%Y-%m-%d %H:%M:%S"), "comments": "",
                         "external_t": round(float(r.normal(5, 8)), 1), "dop": round(float(r.uniform(1, 6)), 1),
                         "fix_type_r": "3D", "satellite_": int(r.integers(4, 11)), "height": round(float(r.normal(1400, 80)), 1),
                         "crc_status": "OK", "outlier_ma": "", "sensor_typ": "gps", "individual": "Cervus elaphus",
                         "tag_ident": f"TAG{e + 1:02d}", "ind_ident": f"ELK{e + 1:02d}", "study_name": "Elk in southwestern Alberta",
                         "date": t.strftime("%Y-%m-%d"), "time": t.strftime("%H:%M:%S"),
                         "timestamp_Converted": t.strftime("%Y-%m-%dT%H:%M:%S"), "summer_indicator": int(is_summer)})
            geoms.append(Point(x, y)); oid += 1
    gdf = gpd.GeoDataFrame(rows, geometry=geoms, crs=32612).to_crs(4326)
    gdf.insert(2, "long", gdf.geometry.x.round(6)); gdf.insert(3, "lat", gdf.geometry.y.round(6))
    gdf.to_file("data/Elk_in_Southwestern_Alberta_2009.geojson", driver="GeoJSON")
