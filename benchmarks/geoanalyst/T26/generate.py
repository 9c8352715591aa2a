from rasterio.warp import calculate_default_transform, reproject, Resampling
county, lc, soils = mc_layers()
write_mc_boundary(county)
soils.to_crs(5070).to_file("data/mc_soils.shp")
left, top = MC_TRANSFORM.c, MC_TRANSFORM.f
bounds = (left, top - 100 * MC_SHAPE[0], left + 100 * MC_SHAPE[1], top)
transform, width, height = calculate_default_transform(MC_CRS, "EPSG:5070", MC_SHAPE[1], MC_SHAPE[0], *bounds, resolution=100)
albers = np.zeros((height, width), dtype="uint8")
reproject(lc, albers, src_transform=MC_TRANSFORM, src_crs=MC_CRS, dst_transform=transform, dst_crs="EPSG:5070",
          resampling=Resampling.nearest, src_nodata=0, dst_nodata=0)
write_raster("data/mc_land_cover.tif", albers, transform, "EPSG:5070", nodata=0)
