county, lc, soils = mc_layers()
write_raster("data/land_cover.tif", lc, MC_TRANSFORM, MC_CRS, nodata=0)
v = mc_vulnerability(county, soils)
write_raster("data/vulnerable_areas.tif", np.where(np.isnan(v), -9999.0, v).astype("float32"), MC_TRANSFORM, MC_CRS, nodata=-9999.0)
