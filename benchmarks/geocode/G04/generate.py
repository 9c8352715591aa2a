# 10 x 10 grid of counties with an illness rate that clusters in the north-east.
r = rng()
cells = grid_cells(0, 0, 100000, 100000, 10, 10)
cx = np.array([c.centroid.x for c in cells]); cy = np.array([c.centroid.y for c in cells])
rate = 20 + 25 * np.exp(-((cx - 80000) ** 2 + (cy - 75000) ** 2) / (2 * 18000.0 ** 2)) + r.normal(0, 2.5, len(cells))
pop = r.integers(2000, 60000, len(cells))
gpd.GeoDataFrame({"fips": [f"{i:05d}" for i in range(len(cells))], "rate": rate.round(2), "pop": pop}, geometry=cells, crs=5070).to_file("data/counties.gpkg", layer="counties", driver="GPKG")
