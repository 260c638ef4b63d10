"""scaffold"""
