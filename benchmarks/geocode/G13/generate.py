# Census tracts (polygons, EPSG:2263 NY Long Island ftUS) without attributes,
# and a population table keyed by GEOID in a separate CSV.
r = rng()
cells = voronoi_cells(shapely.geometry.box(980000, 190000, 1010000, 220000), 40, r)
geoid = [f"36061{100 + i:06d}" for i in range(len(cells))]
gpd.GeoDataFrame({"GEOID": geoid}, geometry=cells, crs=2263).to_file("data/tracts.shp")
pop = r.integers(800, 9000, len(cells))
pd.DataFrame({"GEOID": geoid, "total_pop": pop, "median_income": (r.normal(68000, 18000, len(cells))).round(-2), "borough": r.choice(["Manhattan", "Brooklyn"], len(cells))}).to_csv("data/tract_population.csv", index=False)
